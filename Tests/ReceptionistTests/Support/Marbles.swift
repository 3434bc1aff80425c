import Testing

@testable import Receptionist

// MARK: - Marble diagrams
//
// A compact notation for the timelines of time-based pipelines, in the style of
// swift-async-algorithms' validation diagrams. A test reads as one line:
//
//     let run = Marbles().run("abc-d-----|") { clock, out in
//         .receptionist(
//             Receptionist.pipeline(of: String.self)
//                 .batch(count: 3, every: .milliseconds(5), scheduler: clock)
//                 .deliver(on: .immediate, out)
//         )
//     }
//     #expect(run == "--[abc]------[d]|")
//
// ## Time
// One character is one *tick* of `Marbles.tick` (1 ms unless said otherwise); the character at
// index `i` (spaces not counted) happens at `SchedulerInstant.zero + i × tick` of the run's own
// `ManualScheduler`. The pipeline is built on that scheduler before tick 0 and delivers on
// `.immediate` (or on the same scheduler), so every output has an exact tick.
//
// ## Input diagram
// | symbol       | meaning                                                                    |
// | ------------ | -------------------------------------------------------------------------- |
// | `a`…`z`, `A`…`Z`, `0`…`9` | send that one-character value (`String`)                      |
// | `'text'`     | send the value `text` (several characters, one tick)                       |
// | `-`          | nothing happens at this tick                                               |
// | `!`          | `flush()`                                                                  |
// | `\|`         | `finish()`                                                                 |
// | `^`          | `cancel()`                                                                 |
// | `#`          | let go of the observed model (the run's only reference to it)              |
// | `(` … `)`    | several events in one tick, in order: `(a!)` sends `a`, then flushes       |
// | space        | ignored: use it to line diagrams up                                        |
//
// Events after the last one still need ticks to happen in: add `-` to let timers fire.
//
// ## What happens within a tick
// With `Arrival.afterTimers` (the default), each tick first advances the clock to the tick
// (`advance(to:)`: timers due at or before it fire, in deadline order), then performs the tick's
// input events in order, then runs the work they made due at that instant (`run()`: deliveries
// on the scheduler). So an input that lands exactly on a deadline comes *after* the timer.
//
// With `Arrival.beforeTimers`, every input tick is submitted to the scheduler before the
// pipeline is built, so at equal instants the inputs run *before* any timer (ties run in
// submission order): an input lands on a deadline while that deadline's timer has not fired
// yet. This reaches the "late timer" paths of the state machines.
//
// ## Output diagram
// | symbol            | meaning                                                               |
// | ----------------- | --------------------------------------------------------------------- |
// | `-`               | no event at this tick                                                 |
// | `a`               | an output rendering to one character                                  |
// | `'text'`          | an output rendering to several characters                             |
// | `[abc]`           | an array output (a batch), its elements rendered by the same rules;   |
// |                   | `[]` would be an empty batch                                          |
// | `\|`              | the pipeline became finished (`isFinished`) during this tick          |
// | `^`               | the pipeline became cancelled (`isCancelled`) during this tick        |
// | `(` … `)`         | two or more events in one tick, in the order they happened            |
//
// Rules that make a rendered diagram unambiguous:
// - one tick renders as exactly one of: `-`, a single event, or a parenthesised group of two or
//   more events (never `()` nor a group of one);
// - `|` and `^` come after the tick's outputs: they are read at the end of each tick;
// - an output made between two ticks (a deadline that is not a multiple of the tick) belongs to
//   the next tick, the one whose advance ran it;
// - trailing `-` are dropped, and spaces are ignored when a diagram is compared, so expected
//   diagrams may be spaced to line up with their input.
//
// A value renders through `MarbleValue` (`String`, `Int`, arrays, `Coalesced` as `c` or
// `'c×3'`, `ObservedChange` as its new value), or through a `render` closure given to `run`
// (`Marbles.chain` renders a change as `'a→b'`); a closure's text is used as is if it is one
// character, a bracketed array or already quoted, and quoted otherwise.

/// A value that has a marble rendering: one character, `'text'`, or `[…]`.
protocol MarbleValue {
    var marble: String { get }
}

extension String: MarbleValue {
    var marble: String { Marbles.token(self) }
}

extension Int: MarbleValue {
    var marble: String { Marbles.token(String(self)) }
}

extension Array: MarbleValue where Element: MarbleValue {
    var marble: String { "[" + map(\.marble).joined() + "]" }
}

extension Coalesced: MarbleValue where Element: MarbleValue {
    /// `c` for one output, `'c×3'` for the latest of three.
    var marble: String { count == 1 ? latest.marble : Marbles.token("\(latest.marble)×\(count)") }
}

extension ObservedChange: MarbleValue where Value: MarbleValue {
    /// The new value; `'c×3'` for a change standing for three.
    var marble: String {
        let new = newValue.marble
        return coalescedCount == 1 ? new : Marbles.token("\(new)×\(coalescedCount)")
    }
}

/// Runs input diagrams against pipelines built on a `ManualScheduler`; see the notation above.
struct Marbles: Sendable {
    /// Where inputs fall relative to timers due at the same instant.
    enum Arrival: Sendable {
        /// Timers due at a tick fire before the tick's inputs (the default).
        case afterTimers
        /// A tick's inputs run before the timers due at the same instant.
        case beforeTimers
    }

    /// How long one character lasts.
    var tick: Duration
    var arrival: Arrival

    init(tick: Duration = .milliseconds(1), arrival: Arrival = .afterTimers) {
        precondition(tick > .zero, "Marbles: tick must be greater than zero, got \(tick)")
        self.tick = tick
        self.arrival = arrival
    }

    /// The instant of tick `index`.
    func instant(_ index: Int) -> SchedulerInstant {
        .zero + tick * index
    }

    /// Plays `input` against the pipeline that `build` makes on the run's scheduler, and records
    /// what it delivers. `build` gets the scheduler and the function its task block must call
    /// with each output.
    func run<Output: MarbleValue & Sendable>(
        _ input: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ build: (_ clock: ManualScheduler, _ out: @escaping @Sendable (Output) -> Void) -> MarbleSubject
    ) -> MarbleRun {
        run(input, render: { $0.marble }, sourceLocation: sourceLocation, build)
    }

    /// As ``run(_:sourceLocation:_:)``, rendering each output with `render`.
    func run<Output: Sendable>(
        _ input: String,
        render: @escaping @Sendable (Output) -> String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ build: (_ clock: ManualScheduler, _ out: @escaping @Sendable (Output) -> Void) -> MarbleSubject
    ) -> MarbleRun {
        let ticks = Self.parse(input, sourceLocation: sourceLocation)
        let clock = ManualScheduler()
        let recording = MarbleRecording(tick: tick)
        let slot = Locked<MarbleSubject?>(uncounted: nil)
        let perform: @Sendable ([MarbleInput]) -> Void = { events in
            guard let subject = slot.withLock({ $0 }) else { return }
            for event in events { subject.perform(event, sourceLocation: sourceLocation) }
        }
        if arrival == .beforeTimers {
            for (index, events) in ticks.enumerated() where !events.isEmpty {
                clock.submit(at: instant(index)) { perform(events) }
            }
        }
        let subject = build(clock) { output in
            recording.record(Self.token(render(output)), at: clock.now)
        }
        slot.withLock { $0 = subject }
        for (index, events) in ticks.enumerated() {
            clock.advance(to: instant(index))
            if arrival == .afterTimers {
                perform(events)
                clock.run()
            }
            recording.noteState(finished: subject.isFinished(), cancelled: subject.isCancelled(), tick: index)
        }
        let run = MarbleRun(
            diagram: recording.diagram(length: ticks.count),
            statistics: subject.statistics(),
            pendingTimers: clock.pendingCount,
            nextDeadline: clock.nextDeadline,
            isFinished: subject.isFinished(),
            isCancelled: subject.isCancelled(),
            isSourceAlive: subject.isSourceAlive?(),
            clock: clock
        )
        slot.withLock { $0 = nil }
        return run
    }

    /// Renders a change as `old→new`, with `×n` when it stands for n changes (`?` for an old value
    /// the change does not carry): for chains and coalesced changes.
    @Sendable
    static func chain<Object, Value>(_ change: ObservedChange<Object, Value>) -> String {
        let old = change.oldValue.map { "\($0)" } ?? "?"
        let new = "\(change.newValue)"
        return change.coalescedCount == 1 ? "\(old)→\(new)" : "\(old)→\(new)×\(change.coalescedCount)"
    }

    /// `text` as one output token: itself if it is one already (one character, `[…]` or
    /// `'…'`), else quoted.
    static func token(_ text: String) -> String {
        if text.count == 1 { return text }
        let ends = (text.first, text.last)
        let isToken = text.count >= 2 && (ends == ("[", "]") || ends == ("'", "'"))
        return isToken ? text : "'\(text)'"
    }

    /// The input events of each tick; records an issue for a malformed diagram.
    static func parse(_ diagram: String, sourceLocation: SourceLocation) -> [[MarbleInput]] {
        var ticks: [[MarbleInput]] = []
        var group: [MarbleInput]?
        var quoted: String?
        func report(_ problem: String) {
            Issue.record("Marbles: \(problem) in \"\(diagram)\"", sourceLocation: sourceLocation)
        }
        func add(_ event: MarbleInput?) {
            if group != nil {
                if let event { group!.append(event) }
            } else {
                ticks.append(event.map { [$0] } ?? [])
            }
        }
        for character in diagram {
            if quoted != nil {
                if character == "'" {
                    add(.send(quoted!))
                    quoted = nil
                } else {
                    quoted!.append(character)
                }
                continue
            }
            switch character {
            case " ": continue
            case "-":
                if group != nil { report("'-' inside a group") }
                add(nil)
            case "!": add(.flush)
            case "|": add(.finish)
            case "^": add(.cancel)
            case "#": add(.releaseSource)
            case "'": quoted = ""
            case "(":
                if group != nil { report("nested group") }
                group = []
            case ")":
                guard let events = group else {
                    report("')' without '('")
                    continue
                }
                ticks.append(events)
                group = nil
            case _ where character.isLetter || character.isNumber:
                add(.send(String(character)))
            default:
                report("unknown symbol '\(character)'")
            }
        }
        if group != nil || quoted != nil { report("unclosed group or quote") }
        return ticks
    }
}

extension Marbles {
    /// Plays `input` as posts on a hub channel, one post stream for several subscribers, and
    /// records each one's outputs in a diagram of its own.
    ///
    /// `build` gets the run's scheduler, the hub, the channel, and one output function per
    /// subscriber (`consumers` of them; each takes an output's marble token), and returns the
    /// subscriptions in that order. A value posts it on the channel; `!`, `|` and `^` flush,
    /// finish and cancel every subscription, in order; `|` and `^` in a subscriber's diagram are
    /// its own state.
    func fanOut(
        _ input: String,
        consumers: Int,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ build: (
            _ clock: ManualScheduler, _ hub: Hub, _ channel: Hub.Channel<String>,
            _ outs: [@Sendable (String) -> Void]
        ) -> [Hub.Subscription]
    ) -> [MarbleDiagram] {
        let ticks = Self.parse(input, sourceLocation: sourceLocation)
        let clock = ManualScheduler()
        let hub = Hub()
        let channel = Hub.Channel<String>("marbles")
        let recordings = (0..<consumers).map { _ in MarbleRecording(tick: tick) }
        let outs = recordings.map { recording in
            { @Sendable (token: String) in recording.record(Self.token(token), at: clock.now) }
        }
        let subscriptions = build(clock, hub, channel, outs)
        precondition(
            subscriptions.count == consumers, "Marbles.fanOut: \(consumers) consumers, got \(subscriptions.count)")
        for (index, events) in ticks.enumerated() {
            clock.advance(to: instant(index))
            for event in events {
                if case .send(let value) = event {
                    hub.post(channel, value)
                    continue
                }
                for subscription in subscriptions {
                    switch event {
                    case .send: break
                    case .flush: subscription.flush()
                    case .finish: subscription.finish()
                    case .cancel: subscription.cancel()
                    case .releaseSource:
                        Issue.record("Marbles: '#' needs an observed model", sourceLocation: sourceLocation)
                    }
                }
            }
            clock.run()
            for (recording, subscription) in zip(recordings, subscriptions) {
                recording.noteState(finished: subscription.isFinished, cancelled: subscription.isCancelled, tick: index)
            }
        }
        return recordings.map { $0.diagram(length: ticks.count) }
    }
}

/// One event of an input diagram.
enum MarbleInput: Equatable, Sendable {
    case send(String)
    case flush
    case finish
    case cancel
    case releaseSource
}

/// What a diagram drives: a receptionist made by `Receptionist.pipeline(of:)`, or an observation
/// of a model whose property the diagram's values are written to.
struct MarbleSubject: Sendable {
    let send: @Sendable (String) -> Void
    let flush: @Sendable () -> Void
    let finish: @Sendable () -> Void
    let cancel: @Sendable () -> Void
    let isFinished: @Sendable () -> Bool
    let isCancelled: @Sendable () -> Bool
    let statistics: @Sendable () -> ReceptionistStatistics
    /// `#`: lets go of the observed model; `nil` for a receptionist.
    let releaseSource: (@Sendable () -> Void)?
    let isSourceAlive: (@Sendable () -> Bool)?

    /// A receptionist: values are sent to it. `finished` runs once a finish has delivered
    /// everything (`finish(completion:)`).
    static func receptionist(
        _ receptionist: Receptionist<String>,
        finished: (@Sendable () -> Void)? = nil
    ) -> MarbleSubject {
        MarbleSubject(
            send: { receptionist.send($0) },
            flush: { receptionist.flush() },
            finish: {
                if let finished { receptionist.finish(completion: finished) } else { receptionist.finish() }
            },
            cancel: { receptionist.cancel() },
            isFinished: { receptionist.isFinished },
            isCancelled: { receptionist.isCancelled },
            statistics: { receptionist.statistics },
            releaseSource: nil,
            isSourceAlive: nil
        )
    }

    /// An observation of `model`: values are written with `write`. The subject holds the only
    /// reference to `model` the run keeps (give it no other), so that `#` can deallocate it.
    static func observation<Model: AnyObject & Sendable>(
        of model: Model,
        token: ObservationToken,
        write: @escaping @Sendable (Model, String) -> Void
    ) -> MarbleSubject {
        let holder = ModelHolder(model)
        return MarbleSubject(
            send: { value in
                guard let model = holder.model else {
                    Issue.record("Marbles: a value was sent after '#' released the model")
                    return
                }
                write(model, value)
            },
            flush: { token.flush() },
            finish: { token.finish() },
            cancel: { token.cancel() },
            isFinished: { token.isFinished },
            isCancelled: { token.isCancelled },
            statistics: { token.statistics },
            releaseSource: { holder.release() },
            isSourceAlive: { holder.isAlive }
        )
    }

    func perform(_ event: MarbleInput, sourceLocation: SourceLocation) {
        switch event {
        case .send(let value): send(value)
        case .flush: flush()
        case .finish: finish()
        case .cancel: cancel()
        case .releaseSource:
            guard let releaseSource else {
                Issue.record("Marbles: '#' needs an observed model", sourceLocation: sourceLocation)
                return
            }
            releaseSource()
        }
    }
}

/// The run's strong reference to an observed model, and a weak one that tells whether it still
/// lives after `#`.
private final class ModelHolder<Model: AnyObject & Sendable>: Sendable {
    private let strong: Locked<Model?>
    private let weak: Locked<WeakReference<Model>>

    init(_ model: Model) {
        strong = Locked(uncounted: model)
        weak = Locked(uncounted: WeakReference(model))
    }

    var model: Model? { strong.withLock { $0 } }
    var isAlive: Bool { weak.withLock { $0.value != nil } }

    func release() {
        let model = strong.withLock { $0.take() }
        _ = model  // released here, outside the lock: its deinit finishes observations.
    }
}

/// A weak reference as a value.
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    weak var value: Object?

    init(_ value: Object?) {
        self.value = value
    }
}

/// A weak reference filled in after it is captured: lets a task block call back into the
/// receptionist or token it belongs to (re-entrant cancel, flush, send) without a cycle.
final class BackReference<Object: AnyObject & Sendable>: Sendable {
    private let reference = Locked(uncounted: WeakReference<Object>(nil))

    init() {}

    var value: Object? { reference.withLock { $0.value } }

    /// Stores `object` (weakly) and returns it.
    @discardableResult
    func set(_ object: Object) -> Object {
        reference.withLock { $0.value = object }
        return object
    }
}

/// The outputs of a run, with the instant each was delivered.
private final class MarbleRecording: Sendable {
    private struct State {
        var outputs: [(instant: SchedulerInstant, token: String)] = []
        /// `|` and `^`, at the tick they were first seen.
        var states: [(tick: Int, token: String)] = []
        var sawFinished = false
        var sawCancelled = false
    }

    let tick: Duration
    private let state = Locked(uncounted: State())

    init(tick: Duration) {
        self.tick = tick
    }

    func record(_ token: String, at instant: SchedulerInstant) {
        state.withLock { $0.outputs.append((instant, token)) }
    }

    func noteState(finished: Bool, cancelled: Bool, tick index: Int) {
        state.withLock { state in
            if finished && !state.sawFinished {
                state.sawFinished = true
                state.states.append((index, "|"))
            }
            if cancelled && !state.sawCancelled {
                state.sawCancelled = true
                state.states.append((index, "^"))
            }
        }
    }

    /// The tick during whose advance `instant` was reached.
    private func tickIndex(of instant: SchedulerInstant) -> Int {
        let exact = instant.offset / tick
        let nearest = exact.rounded()
        return Int(abs(exact - nearest) < 1e-9 ? nearest : exact.rounded(.up))
    }

    func diagram(length: Int) -> MarbleDiagram {
        let (outputs, states) = state.withLock { ($0.outputs, $0.states) }
        var slots: [[String]] = Array(repeating: [], count: length)
        func put(_ token: String, _ index: Int) {
            while slots.count <= index { slots.append([]) }
            slots[index].append(token)
        }
        for output in outputs { put(output.token, tickIndex(of: output.instant)) }
        for state in states { put(state.token, state.tick) }
        let text = slots.map { tokens -> String in
            switch tokens.count {
            case 0: "-"
            case 1: tokens[0]
            default: "(" + tokens.joined() + ")"
            }
        }.joined()
        return MarbleDiagram(text)
    }
}

/// A rendered or expected output diagram. Compared without spaces and trailing `-`.
struct MarbleDiagram: Equatable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    let text: String

    init(_ text: String) {
        var normalised = text.filter { $0 != " " }
        while normalised.last == "-" { normalised.removeLast() }
        self.text = normalised
    }

    init(stringLiteral value: String) {
        self.init(value)
    }

    var description: String { "\"\(text)\"" }
}

/// The result of ``Marbles/run(_:render:sourceLocation:_:)``: the output diagram, and the state
/// of the pipeline and its scheduler at the end of the last tick.
struct MarbleRun: Sendable, CustomStringConvertible {
    let diagram: MarbleDiagram
    let statistics: ReceptionistStatistics
    /// Timers still armed on the run's scheduler (`ManualScheduler.pendingCount`).
    let pendingTimers: Int
    /// The earliest of those timers' deadlines (`ManualScheduler.nextDeadline`).
    let nextDeadline: SchedulerInstant?
    let isFinished: Bool
    let isCancelled: Bool
    /// For an observation: whether the model still lived at the end (after `#`).
    let isSourceAlive: Bool?
    /// The run's scheduler. The run let go of its pipeline when it returned (which cancels a
    /// receptionist), so read the pipeline's timers from ``pendingTimers`` and ``nextDeadline``.
    let clock: ManualScheduler

    var description: String { diagram.description }

    static func == (run: MarbleRun, expected: MarbleDiagram) -> Bool {
        run.diagram == expected
    }
}

/// A model with one observed property, for timelines of observed changes.
final class TimelineModel: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored properties are @Observed.
    @Observed var text = "0"
}
