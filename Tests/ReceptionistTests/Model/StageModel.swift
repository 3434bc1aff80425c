// MARK: - Reference models of the stages
//
// Each model restates the documented rules of one stage (Receptionist.docc/Stages.md) in a few
// lines, with no threads, locks, timers or generations: it says what the stage holds, when its
// next timed output is due, and what it hands on for each event. `ModelRun` plays a list of
// operations through a model and returns the expected timeline: a pure function.
//
// Times are whole milliseconds. A stage's timer fires `lateness` after the deadline it was armed
// for (0 for a punctual scheduler). Every operation at time `t` happens after the clock reached
// `t`, so a timer that fires at `t` fires before any input at `t`; with a late timer, inputs that
// arrive at or after the deadline but before the timer take the stages' "late timer" rules.

/// The documented behaviour of one stage, as a plain value.
protocol StageModel<Input, Output>: SendableMetatype {
    associatedtype Input
    associatedtype Output

    /// The deadline the stage's timer is armed for, if it is.
    var deadline: Int? { get }
    /// Whether the stage holds an element it has not handed on.
    var isHolding: Bool { get }
    /// An element arrived at `now`.
    mutating func receive(_ input: Input, at now: Int) -> [Output]
    /// The timer armed for ``deadline`` fired at `now` (the deadline, or later).
    mutating func deadlineReached(at now: Int) -> [Output]
    /// `flush()`, and `finish()`: hand on what is held now. (After `finish()` the stage is never
    /// asked again, so the two need not differ.)
    mutating func flush(at now: Int) -> [Output]
}

extension StageModel {
    /// `self`, then `next`.
    func then<Next: StageModel>(_ next: Next) -> ChainModel<Self, Next> {
        ChainModel(first: self, second: next)
    }
}

/// Two stages in a row. At most one of them is time-based in the cases tested: with two, which
/// of two timers due at the same instant fires first is not documented.
struct ChainModel<First: StageModel, Second: StageModel>: StageModel where First.Output == Second.Input {
    var first: First
    var second: Second

    var deadline: Int? { [first.deadline, second.deadline].compactMap { $0 }.min() }
    var isHolding: Bool { first.isHolding || second.isHolding }

    mutating func receive(_ input: First.Input, at now: Int) -> [Second.Output] {
        pass(first.receive(input, at: now), at: now)
    }

    mutating func deadlineReached(at now: Int) -> [Second.Output] {
        let due = deadline
        var outputs: [Second.Output] = []
        if first.deadline == due { outputs += pass(first.deadlineReached(at: now), at: now) }
        if second.deadline == due { outputs += second.deadlineReached(at: now) }
        return outputs
    }

    /// Each stage hands on what it holds, into the next, which then hands on what it holds.
    mutating func flush(at now: Int) -> [Second.Output] {
        var outputs = pass(first.flush(at: now), at: now)
        outputs += second.flush(at: now)
        return outputs
    }

    private mutating func pass(_ elements: [First.Output], at now: Int) -> [Second.Output] {
        var outputs: [Second.Output] = []
        for element in elements { outputs += second.receive(element, at: now) }
        return outputs
    }
}

// MARK: filter, map, compactMap

/// Stateless: `transform` returns the output, or `nil` to drop the element.
struct TransformModel<Input, Output>: StageModel {
    let transform: (Input) -> Output?

    var deadline: Int? { nil }
    var isHolding: Bool { false }

    mutating func receive(_ input: Input, at now: Int) -> [Output] {
        transform(input).map { [$0] } ?? []
    }

    mutating func deadlineReached(at now: Int) -> [Output] { [] }
    mutating func flush(at now: Int) -> [Output] { [] }
}

// MARK: scan

/// A running result: `next(result, element)` for each element, from `result`.
struct ScanModel<Input, Output>: StageModel {
    var result: Output
    let next: (Output, Input) -> Output

    var deadline: Int? { nil }
    var isHolding: Bool { false }

    mutating func receive(_ input: Input, at now: Int) -> [Output] {
        result = next(result, input)
        return [result]
    }

    mutating func deadlineReached(at now: Int) -> [Output] { [] }
    mutating func flush(at now: Int) -> [Output] { [] }
}

// MARK: removeDuplicates

/// Drops an element that `isDuplicate(last passed on, element)` calls a repeat; the first passes.
struct RemoveDuplicatesModel<Element>: StageModel {
    let isDuplicate: (Element, Element) -> Bool
    var lastPassed: Element?

    init(by isDuplicate: @escaping (Element, Element) -> Bool) {
        self.isDuplicate = isDuplicate
    }

    var deadline: Int? { nil }
    var isHolding: Bool { false }

    mutating func receive(_ input: Element, at now: Int) -> [Element] {
        if let lastPassed, isDuplicate(lastPassed, input) { return [] }
        lastPassed = input
        return [input]
    }

    mutating func deadlineReached(at now: Int) -> [Element] { [] }
    mutating func flush(at now: Int) -> [Element] { [] }
}

/// An observed change as the models see it: the values it carries and how many changes it
/// stands for (after `coalesce()`).
struct ChangeModel: Equatable, CustomStringConvertible {
    var old: Int?
    var new: Int
    var count = 1

    var description: String {
        let old = old.map(String.init) ?? "?"
        return count == 1 ? "\(old)→\(new)" : "\(old)→\(new)×\(count)"
    }
}

/// `removeDuplicates()` of observed changes: a change whose new value equals the new value of the
/// last change passed on (for the first change: its own old value) is dropped.
struct RemoveDuplicateChangesModel: StageModel {
    var lastNew: Int?

    var deadline: Int? { nil }
    var isHolding: Bool { false }

    mutating func receive(_ input: ChangeModel, at now: Int) -> [ChangeModel] {
        let previous = lastNew ?? input.old
        if previous == input.new { return [] }
        lastNew = input.new
        return [input]
    }

    mutating func deadlineReached(at now: Int) -> [ChangeModel] { [] }
    mutating func flush(at now: Int) -> [ChangeModel] { [] }
}

// MARK: batch

/// A batch opens with its first element and is handed on when it holds `count` elements, or
/// `interval` after its first element; it covers `[first, first + interval)`.
struct BatchModel<Element>: StageModel {
    let count: Int?
    let interval: Int?
    var open: [Element] = []
    var openedAt = 0

    var deadline: Int? { open.isEmpty ? nil : interval.map { openedAt + $0 } }
    var isHolding: Bool { !open.isEmpty }

    mutating func receive(_ input: Element, at now: Int) -> [[Element]] {
        var outputs: [[Element]] = []
        // An element arriving at `first + interval` or later starts the next batch.
        if let deadline, now >= deadline { outputs.append(take()) }
        if open.isEmpty { openedAt = now }
        open.append(input)
        if let count, open.count >= count { outputs.append(take()) }
        return outputs
    }

    mutating func deadlineReached(at now: Int) -> [[Element]] { [take()] }

    mutating func flush(at now: Int) -> [[Element]] { open.isEmpty ? [] : [take()] }

    private mutating func take() -> [Element] {
        defer { open = [] }
        return open
    }
}

// MARK: batch by content

/// A batch as ``BatchModel`` keeps it, and also handed on when an element arrives that does not
/// belong with the open batch's last element; that element opens the next batch.
struct ContentBatchModel<Element>: StageModel {
    var batching: BatchModel<Element>
    let belongs: (_ previous: Element, _ next: Element) -> Bool

    var deadline: Int? { batching.deadline }
    var isHolding: Bool { batching.isHolding }

    mutating func receive(_ input: Element, at now: Int) -> [[Element]] {
        var outputs: [[Element]] = []
        if let last = batching.open.last, !belongs(last, input) { outputs += batching.flush(at: now) }
        return outputs + batching.receive(input, at: now)
    }

    mutating func deadlineReached(at now: Int) -> [[Element]] { batching.deadlineReached(at: now) }

    mutating func flush(at now: Int) -> [[Element]] { batching.flush(at: now) }
}

// MARK: throttle

/// Every output opens a window of `interval`. An element arriving with no window open is handed
/// on at once (`leading`) or held, and opens one; inside a window elements are held (the latest,
/// the first, or none). When the window ends, the held element is handed on and opens the next
/// window; with nothing held the stage becomes idle. `flush()` hands on the held element, which
/// opens a window.
struct ThrottleModel<Element>: StageModel {
    enum Keep {
        case latest
        case first
        case none
    }

    let interval: Int
    let leading: Bool
    let keep: Keep
    /// When the open window ends; `nil` when idle.
    var windowEnd: Int?
    var held: Element?

    init(interval: Int, leading: Bool, keep: Keep) {
        self.interval = interval
        self.leading = leading
        self.keep = keep
    }

    var deadline: Int? { windowEnd }
    var isHolding: Bool { held != nil }

    mutating func receive(_ input: Element, at now: Int) -> [Element] {
        var outputs: [Element] = []
        // An element arriving exactly at a window's end falls in the next window.
        if let windowEnd, now >= windowEnd { outputs += deadlineReached(at: now) }
        guard windowEnd != nil else {
            windowEnd = now + interval
            if leading { outputs.append(input) } else { held = input }
            return outputs
        }
        switch keep {
        case .latest: held = input
        case .first: held = held ?? input
        case .none: break
        }
        return outputs
    }

    mutating func deadlineReached(at now: Int) -> [Element] {
        guard let element = held else {
            windowEnd = nil
            return []
        }
        return handOn(element, at: now)
    }

    mutating func flush(at now: Int) -> [Element] {
        guard let element = held else { return [] }
        return handOn(element, at: now)
    }

    private mutating func handOn(_ element: Element, at now: Int) -> [Element] {
        held = nil
        windowEnd = now + interval
        return [element]
    }
}

// MARK: debounce

/// An element is handed on once `interval` has passed without a newer one (a newer one replaces
/// it), or at the latest `maxWait` after the first element of its burst. An element arriving
/// exactly when the pending one is due does not replace it: the pending one is handed on first.
///
/// "A flood costs one timer": the timer is armed when a burst starts, and re-armed (for the due
/// time) only when it fires before the pending element is due. With a punctual scheduler this is
/// "handed on when due"; with a late one, it says when.
struct DebounceModel<Element>: StageModel {
    let interval: Int
    let maxWait: Int?
    var pending: Element?
    var lastArrival = 0
    var burstStart = 0
    var timer: Int?

    init(interval: Int, maxWait: Int? = nil) {
        self.interval = interval
        self.maxWait = maxWait
    }

    /// When the pending element is due.
    var due: Int? {
        guard pending != nil else { return nil }
        return min(lastArrival + interval, maxWait.map { burstStart + $0 } ?? .max)
    }

    var deadline: Int? { timer }
    var isHolding: Bool { pending != nil }

    mutating func receive(_ input: Element, at now: Int) -> [Element] {
        var outputs: [Element] = []
        if let due, now >= due { outputs += take() }
        if pending == nil { burstStart = now }
        pending = input
        lastArrival = now
        if timer == nil { timer = due }
        return outputs
    }

    mutating func deadlineReached(at now: Int) -> [Element] {
        timer = nil
        guard let due else { return [] }
        if now >= due { return take() }
        timer = due
        return []
    }

    mutating func flush(at now: Int) -> [Element] {
        timer = nil
        return take()
    }

    private mutating func take() -> [Element] {
        defer { pending = nil }
        return pending.map { [$0] } ?? []
    }
}

// MARK: - Sources and delivery

/// Where the elements come from.
enum ModelSource<Input>: Sendable {
    /// Sent to a receptionist: each sample becomes the input `convert` makes of it.
    case sent(@Sendable (Sample) -> Input)
    /// Written to an observed box whose value starts at 0: each write is a change from the value
    /// before it. `stagesKeepModel`: the stages hold the changes themselves (not values mapped from
    /// them), so the box lives as long as a stage holds one.
    case observed(@Sendable (ChangeModel) -> Input, stagesKeepModel: Bool)
}

/// How outputs reach the task block.
enum ModelDelivery<Output>: Sendable {
    /// `.immediate`: each output is delivered when the last stage hands it on.
    case immediate
    /// A `ManualTarget`: outputs wait until the test runs the target, folded into the one waiting
    /// by `fold` (`coalesce()`) if given. `keepsModel`: the outputs are observed changes, which
    /// keep their box alive while they wait.
    case manual(fold: (@Sendable (inout Output, Output) -> Void)?, keepsModel: Bool)
}

/// Plays operations through a stage model: the expected timeline.
///
/// - A `send` at `t` reaches the stages at `t`, unless the pipeline was finished or cancelled.
/// - An advance to `target` fires each timer on the way (`lateness` after its deadline), in order.
/// - `flush()` hands on what the stages hold; outputs already waiting for the target still wait.
/// - `finish()` hands on what the stages hold, then the pipeline ends once every output was
///   delivered: at once on `.immediate`, when the target runs otherwise.
/// - `cancel()` discards what the stages hold and what waits for the target, and ends the
///   pipeline, unless it already ended.
/// - The statistics count the outputs of the last stage: received when handed on, delivered when
///   the task block ran, coalesced when folded into one waiting, discarded when waiting at
///   `cancel()`; an output delivered on `.immediate` never waits, so is never pending.
/// - Observed sources: a box the test let go of and that nothing in the pipeline keeps alive is
///   deallocated, which finishes the observation (as `finish()`).
struct ModelRun<Stage: StageModel> where Stage.Output: Equatable {
    typealias Output = Stage.Output

    var stage: Stage
    let source: ModelSource<Stage.Input>
    let delivery: ModelDelivery<Output>
    /// How late timers fire.
    let lateness: Int

    private var now = 0
    /// The stages take elements (neither finished nor cancelled).
    private var isAccepting = true
    /// The delivery is finishing: it ends once what waits is delivered.
    private var isFinishing = false
    private var hasEnded = false
    private var waiting: [Output] = []
    private var boxValue = 0
    private var isReleased = false
    private var timeline: [TimelineEntry<Output>] = []
    private var counts = DeliveryCounts()

    init(stage: Stage, source: ModelSource<Stage.Input>, delivery: ModelDelivery<Output>, lateness: Int) {
        self.stage = stage
        self.source = source
        self.delivery = delivery
        self.lateness = lateness
    }

    /// The expected timeline of `operations`.
    static func timeline(
        of operations: [ModelOperation],
        stage: Stage,
        source: ModelSource<Stage.Input>,
        delivery: ModelDelivery<Output>,
        lateness: Int
    ) -> [TimelineEntry<Output>] {
        var run = ModelRun(stage: stage, source: source, delivery: delivery, lateness: lateness)
        for operation in operations { run.perform(operation) }
        run.counts.pending = run.waiting.count
        return run.timeline + [.statistics(run.counts)]
    }

    private mutating func perform(_ operation: ModelOperation) {
        switch operation {
        case .send(let sample):
            let input: Stage.Input
            switch source {
            case .sent(let convert):
                input = convert(sample)
            case .observed(let convert, _):
                // The box takes the write even when the observation has ended.
                input = convert(ChangeModel(old: boxValue, new: sample.value))
                boxValue = sample.value
            }
            if isAccepting { deliver(stage.receive(input, at: now)) }
        case .advance(let milliseconds):
            let target = now + milliseconds
            while isAccepting, let deadline = stage.deadline, deadline + lateness <= target {
                now = deadline + lateness
                deliver(stage.deadlineReached(at: now))
                boxMayHaveGone()
            }
            now = target
        case .flush:
            if isAccepting {
                deliver(stage.flush(at: now))
                boxMayHaveGone()
            }
        case .finish:
            if isAccepting { finish() }
        case .cancel:
            isAccepting = false
            guard !hasEnded else { return }
            counts.discarded += waiting.count
            waiting = []
            end(.cancelled(at: now))
        case .runTarget:
            guard case .manual = delivery, !hasEnded else { return }
            for output in waiting { timeline.append(.output(output, at: now)) }
            counts.delivered += waiting.count
            waiting = []
            if isFinishing { end(.finished(at: now)) }
            boxMayHaveGone()
        case .releaseSource:
            isReleased = true
            boxMayHaveGone()
        }
    }

    private mutating func deliver(_ outputs: [Output]) {
        counts.received += outputs.count
        switch delivery {
        case .immediate:
            for output in outputs { timeline.append(.output(output, at: now)) }
            counts.delivered += outputs.count
        case .manual(let fold, _):
            for output in outputs {
                if let fold, !waiting.isEmpty {
                    fold(&waiting[waiting.count - 1], output)
                    counts.coalesced += 1
                } else {
                    waiting.append(output)
                    counts.maxPending = max(counts.maxPending, waiting.count)
                }
            }
        }
    }

    private mutating func finish() {
        deliver(stage.flush(at: now))
        isAccepting = false
        if waiting.isEmpty {
            end(.finished(at: now))
        } else {
            isFinishing = true
        }
    }

    private mutating func end(_ entry: TimelineEntry<Output>) {
        hasEnded = true
        timeline.append(entry)
    }

    /// An observed box the test let go of goes when nothing keeps it alive, and its observation
    /// finishes.
    private mutating func boxMayHaveGone() {
        guard case .observed(_, let stagesKeepModel) = source, isReleased, isAccepting else { return }
        if stagesKeepModel && stage.isHolding { return }
        if case .manual(_, keepsModel: true) = delivery, !waiting.isEmpty { return }
        finish()
    }
}
