import Dispatch

/// The running form of a pipeline with stages.
///
/// Elements, timer fires, flushes and the final finish all enter one *intake*: a receptionist
/// whose target is ``ImmediateTarget``. The first thread to find it idle drains it, running the
/// stages for every event in order (others only enqueue and return); no lock is held while the
/// stages run, so their closures may re-enter (a re-entrant send is processed after the current
/// event). After 256 events with more waiting, the drain moves to the library's stage queue, so
/// that a sender is not kept running the stages for others. The last stage sends outputs to the
/// *delivery* receptionist, which bounces them to the target.
///
/// The intake is unbounded unless the policy is bounded: if the senders together outpace the
/// stages, events wait in it. With a dropping policy (``BufferPolicy/dropOldest(capacity:)``,
/// ``BufferPolicy/dropNewest(capacity:)``), an element that finds `capacity` elements already
/// waiting for the stages is dropped there, and counted in the statistics as received and
/// dropped. It is the newest whatever the policy, since the stages must see the elements they get
/// in order.
///
/// With ``BufferPolicy/watermarks(low:high:)``, the pipeline is built the same way (the intake
/// drains on the stage queue through a ``DrainGate`` whose capacity is the high watermark), but
/// the intake never makes its senders wait: it accepts every element, and its machine tells the
/// senders to pause once `high` elements wait in front of the stages (which happens when the
/// outputs behind them stand for `high`, so the gate parks the drain), and calls them back once
/// no more than `low` do.
///
/// With ``BufferPolicy/waiting(capacity:)``, the intake takes the same policy (its senders wait
/// for room in front of the stages) and drains on the stage queue, and the stages never wait: the
/// delivery buffer behind them is unbounded, and a ``DrainGate`` lets the intake's drain take
/// input only while the outputs waiting for their task block stand for fewer than `capacity`
/// inputs. When they stand for more, the drain parks, and the delivery resumes it on the stage
/// queue once they stand for half or less. So memory is bounded end to end, and only senders ever
/// wait: no thread of the library, however many pipelines wait at once. (A coalescing delivery
/// holds at most one output: it needs no gate, and its intake drains like any other pipeline's.)
///
/// This is what keeps stages in order across threads: a lock per stage would not, since two
/// threads leaving one stage's lock in the order a, b could enter the next in the order b, a.
@usableFromInline
final class StagedPipeline<Input: Sendable>: Sendable {
    @usableFromInline
    let intake: ReceptionistCore<StageEvent<Input>>
    private let timers: StageTimers
    let delivery: any DeliveryControl
    /// With a bounded policy: how many elements may wait for the stages, and how many do.
    @usableFromInline
    let intakeBound: IntakeBound?

    // Inlinable although it runs once: the intake's handler, formed here, runs for every element.
    @inlinable
    convenience init<Output>(_ plan: PipelinePlan<Input, Output>) {
        let policy = plan.delivery.policy
        let flowControlled = policy.kind == .waiting || policy.kind == .watermarks
        if flowControlled && plan.delivery.merge == nil {
            // A watermark policy parks the stages at the high watermark and resumes them at the low.
            let gate =
                policy.kind == .watermarks
                ? DrainGate(capacity: policy.highWatermark!, lowWater: policy.lowWatermark!, weighs: plan.weigh != nil)
                : DrainGate(capacity: policy.capacity!)
            self.init(gated: plan, timers: StageTimers(deliveringTo: plan.delivery.target, gate: gate))
            return
        }
        let timers = StageTimers(deliveringTo: plan.delivery.target)
        let delivery = plan.delivery.makeCore()
        let head = plan.stages.build(StageInlet(DeliveryStage(core: delivery)), timers)
        let bound = plan.delivery.policy.intakeCapacity.map { IntakeBound(capacity: $0) }
        // A waiting policy (here with a coalescing delivery, which never makes the stages wait)
        // bounds the intake by making its senders wait too; a watermark policy pauses them there.
        let waiting = plan.delivery.policy.kind == .waiting
        let refusesWaiting: (@Sendable () -> Bool)? = waiting ? { @Sendable in delivery.waitingHereCouldDeadlock } : nil
        let intake = ReceptionistCore<StageEvent<Input>>(
            Delivery(
                on: .immediate, buffering: flowControlled ? plan.delivery.policy : .unbounded,
                Self.runningStages(head, timers, bound: bound, gate: nil)
            ).timed(by: plan.delivery.clock),
            overflowTarget: timers.stageQueue,
            refusesWaiting: refusesWaiting
        )
        Self.connect(timers, to: intake)
        self.init(intake: intake, timers: timers, delivery: delivery, bound: bound)
    }

    /// A pipeline with a ``BufferPolicy/waiting(capacity:)`` or
    /// ``BufferPolicy/watermarks(low:high:)`` delivery that does not coalesce: its intake drains
    /// through a ``DrainGate`` into an unbounded delivery of weighed outputs.
    @inlinable
    convenience init<Output>(gated plan: PipelinePlan<Input, Output>, timers: StageTimers) {
        let policy = plan.delivery.policy
        let gate = timers.gate!
        let handler = plan.delivery.handler
        // An output counts until its task block returned: a stalled block holds its weight, so
        // flow control (and the stages' room) count what is really undelivered.
        var weighed = Delivery<Weighed<Output>>(on: plan.delivery.target, buffering: .unbounded) { item in
            handler(item.output)
            gate.handedOver(item.weight)
        }
        weighed.drainBudget = plan.delivery.drainBudget
        weighed.clock = plan.delivery.clock
        // Its drains are marked: a task block must not wait for room at the intake either.
        let delivery = ReceptionistCore(weighed, marksDrains: true)
        let head = plan.stages.build(StageInlet(WeighedDeliveryStage(core: delivery, gate: gate)), timers)
        // The intake drains on the stage queue: a sender only enqueues (one lock), and a full
        // pipeline parks its drain instead of holding any thread. (Run inline by the senders, as
        // other pipelines are, the stages' work would fall on the sender, and a single producer
        // would pay for it on every record: Benchmarks/README.md, "Ingest".) The queue is shared
        // by every pipeline, so it is not a context where waiting is refused (`StageQueueTarget`).
        var intakeDelivery = Delivery(
            on: StageQueueTarget(timers.stageQueue), buffering: plan.delivery.policy,
            Self.runningStages(head, timers, bound: nil, gate: gate, weigh: plan.weigh)
        ).timed(by: plan.delivery.clock)
        if let weigh = plan.weigh {
            // Only elements weigh: timer fires, flushes and the finish are free.
            intakeDelivery.weighing = Weighing(weighing: Input.self) { event in
                guard case .element(let element) = event else { return 0 }
                return weigh(element)
            }
        }
        let intake = ReceptionistCore<StageEvent<Input>>(
            intakeDelivery,
            gate: gate,
            refusesWaiting: { delivery.waitingHereCouldDeadlock }
        )
        // Senders waiting in front of the stages are woken once the intake is empty: the outputs
        // behind the stages keep the task block busy meanwhile. A watermark policy counts what
        // waits on both sides of the stages, so each hand-over behind them may resume producers.
        if policy.kind == .waiting { intake.state.withLock { $0.wakesSendersWhenEmpty() } }
        if policy.kind == .watermarks {
            gate.onHandedOver.withLock { $0 = ProducerCheck { [weak intake] in intake?.recheckWritability() } }
        }
        Self.connect(timers, to: intake)
        self.init(intake: intake, timers: timers, delivery: delivery, bound: nil)
    }

    /// The intake's handler: runs the stages for each event. `bound` and `gate` hear of each
    /// element the stages take (a dropping policy's bound, a flow-controlled policy's gate, with
    /// its weight if the pipeline is weighed by `weigh`).
    @inlinable
    static func runningStages(
        _ head: StageInlet<Input>,
        _ timers: StageTimers,
        bound: IntakeBound?,
        gate: DrainGate?,
        weigh: (@Sendable (Input) -> Int)? = nil
    ) -> @Sendable (StageEvent<Input>) -> Void {
        { event in
            switch event {
            case .element(let element):
                bound?.taken()
                if let gate { gate.inputTaken(weighing: gate.weighs ? weigh!(element) : 1) }
                head.receive(element)
            case .timer(let fire):
                fire.node.timerFired(fire.id)
            case .flush:
                head.flush()
            case .urgent:
                gate?.runUrgent()
            case .finish:
                head.finish()
                timers.cancelAll()
            }
        }
    }

    /// Connects `timers` to `intake`: each fire enters the intake as an event.
    ///
    /// Inlinable, so that the closure is formed where `Input` is known: formed in the
    /// (non-inlinable) designated initialiser, it ran the intake's send unspecialised, and a fire
    /// that found the intake idle ran the intake's drain, and every element that came meanwhile
    /// for a whole budget, through the generic drain, which looks up metadata at run time for
    /// each (row "batch(count: 1000, every: 10 ms)": several hundred instructions per element
    /// whenever a timer's fire started the drain).
    @inlinable
    static func connect(_ timers: StageTimers, to intake: ReceptionistCore<StageEvent<Input>>) {
        if let gate = intake.gate {
            // Behind a gate, a fire must not wait for room: it may be what frees it (a batch that
            // holds the whole bound is handed on by its timer). It runs on the intake's drain ahead
            // of the elements waiting there.
            timers.connect { [weak intake] fire in
                guard let intake else { return }
                gate.addUrgent { fire.node.timerFired(fire.id) }
                _ = intake.sendExceedingCapacity(.urgent)
            }
        } else {
            timers.connect { [weak intake] fire in _ = intake?.sendExceedingCapacity(.timer(fire)) }
        }
    }

    /// Callers connect the timers to `intake` first (``connect(_:to:)``, from inlinable code).
    @usableFromInline
    init<Output>(
        intake: ReceptionistCore<StageEvent<Input>>,
        timers: StageTimers,
        delivery: ReceptionistCore<Output>,
        bound: IntakeBound?
    ) {
        self.intake = intake
        self.timers = timers
        self.delivery = delivery
        self.intakeBound = bound
        self.recordDroppedInput = { [unowned delivery] in delivery.recordDroppedInput() }
    }

    /// Counts an element dropped at the intake on the delivery's statistics.
    @usableFromInline
    let recordDroppedInput: @Sendable () -> Void

    @inlinable
    func send(_ element: Input) -> SendResult {
        guard let bound = intakeBound else { return intake.send(.element(element)) }
        guard bound.admit() else {
            // Full: dropped here, unless the pipeline no longer takes input at all.
            guard isActive else { return intake.refusal }
            recordDroppedInput()
            return .dropped
        }
        let result = intake.send(.element(element))
        if !result.isAccepted { bound.taken() }
        return result
    }

    /// Sends `elements` in order: in one step of the intake, unless a dropping policy bounds it
    /// (then one at a time, as ``send(_:)``, up to the first refusal).
    @inlinable
    func send(contentsOf elements: [Input]) -> SendContentsResult {
        guard intakeBound != nil, !elements.isEmpty else {
            return intake.send(contentsOf: elements.map { .element($0) })
        }
        var result = SendContentsResult(nothingSentAnswering: .accepted)
        for element in elements {
            result = result.adding(send(element))
            if case .refused = result.result { break }
        }
        return SendContentsResult(count: elements.count, accepted: result.accepted, result: result.result)
    }

    /// Sends `element` from async code: with a waiting policy, suspends while the intake is
    /// full; with a watermark policy, once it is accepted, while the producers are paused;
    /// otherwise as ``send(_:)``.
    @inlinable
    func sendSuspending(_ element: Input) async -> SendResult {
        guard intake.waits else { return await intake.suspendingWhilePaused(send(element)) }
        return await intake.sendSuspending(.element(element))
    }

    /// See ``Receptionist/whenWritable(on:_:)``: the intake, in front of the stages, pauses and
    /// resumes the producers, counting what waits on both sides of the stages.
    @usableFromInline
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {
        intake.whenWritable(on: target, resume)
    }

    /// See ``Receptionist/onWritabilityChange(on:_:)``.
    @usableFromInline
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        intake.onWritabilityChange(on: target, handler)
    }

    /// See ``Receptionist/writability``.
    @usableFromInline
    var writability: Writability { intake.writability }

    /// Hands on what the stages hold now; see ``Receptionist/flush()``.
    @usableFromInline
    func flush() {
        _ = intake.sendExceedingCapacity(.flush)
    }

    /// No more input: the stages hand on what they hold, then delivery finishes.
    @usableFromInline
    func finish() {
        intake.finish(appending: .finish)
        // The producers stopped: what waits in front of a gate goes in whatever the room, so that
        // the finish behind it is reached.
        intake.gate?.finish()
    }

    /// Runs `completion` once the delivery ended.
    @usableFromInline
    func whenEnded(_ completion: @escaping @Sendable () -> Void) {
        delivery.whenEnded(completion)
    }

    /// Stops everything now: queued input, stage contents, timers and pending deliveries are
    /// discarded.
    @usableFromInline
    func cancel() {
        intake.cancel()
        intake.gate?.cancel()
        timers.cancelAll()
        delivery.cancel()
    }

    /// What the owner's `deinit` does: cancel, unless ``finish()`` was called, in which case the
    /// stages still hand on what they hold and everything is delivered.
    func ownerReleased() {
        if intake.lifecycle == .active { cancel() }
    }

    /// Where the stages continue when a burst keeps the intake busy: the library's stage queue at
    /// the quality of service of the delivery target.
    @usableFromInline
    var stageQueue: DispatchQueue { timers.stageQueue }

    /// Test hook: the timer queues made for the time-based stages that kept the default
    /// scheduler.
    package var defaultTimerQueues: [DispatchQueue] { timers.defaultTimerQueues }

    /// Neither finishing nor ended.
    @usableFromInline
    var isActive: Bool { intake.lifecycle == .active }

    /// The delivery receptionist's flag: a cancel took effect if and only if it cancelled the
    /// delivery (the intake may have finished before a cancel that still discarded outputs, and
    /// the delivery may have finished before the intake noticed).
    @usableFromInline
    var isCancelled: Bool { delivery.isCancelled }
    @usableFromInline
    var isFinished: Bool { delivery.isFinished }
    /// The delivery's statistics, with what waits at the intake, in front of the stages
    /// (``ReceptionistStatistics/pendingBeforeStages``), and its senders' waits and pauses.
    @usableFromInline
    var statistics: ReceptionistStatistics {
        delivery.statistics.adding(intake: intake.statistics)
    }
}

/// Where a waiting pipeline's intake drains: the library's stage queue, as a plain target. Not
/// ``ContextAware`` as a `DispatchQueue` target is: the queue is concurrent and shared by every
/// pipeline of its quality of service, so code running on it (another pipeline's stages) does not
/// hold this intake's drains, and a send from there waits like any other.
@usableFromInline
struct StageQueueTarget: DeliveryTarget {
    let queue: DispatchQueue

    @usableFromInline
    init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    @usableFromInline
    func submit(_ work: @escaping @Sendable () -> Void) {
        // As every drain submitted to a queue: at the queue's QoS, not the sender's.
        queue.submit(work)
    }
}

/// The bound of a pipeline's intake: how many elements wait for the stages.
@usableFromInline
final class IntakeBound: Sendable {
    @usableFromInline let capacity: Int
    @usableFromInline let waiting = AtomicValue<Int>(0)

    @usableFromInline
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Counts an element in, unless `capacity` already wait.
    @inlinable
    func admit() -> Bool {
        if waiting.add(1, ordering: .relaxed).newValue <= capacity { return true }
        waiting.subtract(1, ordering: .relaxed)
        return false
    }

    /// An element left the intake (the stages took it, or it was not accepted).
    @inlinable
    func taken() {
        waiting.subtract(1, ordering: .relaxed)
    }
}

extension BufferPolicy {
    /// The bound a pipeline's intake takes from its delivery policy: the capacity of a dropping
    /// policy (a waiting one bounds the intake with its own policy, making senders wait).
    @usableFromInline
    var intakeCapacity: Int? {
        switch kind {
        case .dropOldest, .dropNewest: capacity
        case .unbounded, .waiting, .watermarks: nil
        }
    }
}

/// An event entering a pipeline's intake.
@usableFromInline
enum StageEvent<Input: Sendable>: Sendable {
    case element(Input)
    case timer(TimerFire)
    case flush
    /// Runs the urgent work of the intake's ``DrainGate`` (timer fires, which must not wait
    /// behind the elements), in case no drain was scheduled to run it.
    case urgent
    case finish
}

/// The delivery receptionist at the end of a pipeline, whatever its element type.
protocol DeliveryControl: Sendable {
    func cancel()
    /// Runs `completion` once the delivery ended: everything delivered and the task block
    /// released, or cancelled.
    func whenEnded(_ completion: @escaping @Sendable () -> Void)
    var isCancelled: Bool { get }
    var isFinished: Bool { get }
    var statistics: ReceptionistStatistics { get }
}

extension DeliveryEngine: DeliveryControl where Guard: ~Copyable {}

extension DispatchQueue {
    /// Where a pipeline's stages continue when a burst keeps its intake busy (see
    /// ``StagedPipeline``), for a pipeline whose target runs at `qos`: a concurrent queue of the
    /// library's own for each QoS class, created on first use.
    static func stageQueue(_ qos: DispatchQoS) -> DispatchQueue {
        switch qos.qosClass {
        case .userInteractive: StageQueues.userInteractive
        case .userInitiated: StageQueues.userInitiated
        case .utility: StageQueues.utility
        case .background: StageQueues.background
        default: StageQueues.default
        }
    }
}

/// The stage queues, one per QoS class (`.default` also for `.unspecified`).
private enum StageQueues {
    static let userInteractive = make(.userInteractive)
    static let userInitiated = make(.userInitiated)
    static let `default` = make(.default)
    static let utility = make(.utility)
    static let background = make(.background)

    private static func make(_ qos: DispatchQoS) -> DispatchQueue {
        DispatchQueue(label: "Receptionist.stages", qos: qos, attributes: .concurrent)
    }
}
