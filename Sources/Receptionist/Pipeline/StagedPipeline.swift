import Dispatch

/// The running form of a pipeline with stages.
///
/// Elements, timer fires, flushes and the final finish all enter one *intake*: a receptionist
/// whose target is ``ImmediateTarget``. The first thread to find it idle drains it, running the
/// stages for every event in order (others only enqueue and return); no lock is held while the
/// stages run, so their closures may re-enter (a re-entrant send is processed after the current
/// event). After 256 events with more waiting, the drain moves to the library's stage queue, so
/// that a sender is not kept running the stages for others. The intake is unbounded: if the
/// senders together outpace the stages, events wait in it. The last stage sends outputs to the
/// *delivery* receptionist, which bounces them to the target.
///
/// This is what keeps stages in order across threads: a lock per stage would not, since two
/// threads leaving one stage's lock in the order a, b could enter the next in the order b, a.
@usableFromInline
final class StagedPipeline<Input: Sendable>: Sendable {
    @usableFromInline
    let intake: ReceptionistCore<StageEvent<Input>>
    private let timers: StageTimers
    let delivery: any DeliveryControl

    // Inlinable although it runs once: the intake's handler, formed here, runs for every element.
    @inlinable
    convenience init<Output>(_ plan: PipelinePlan<Input, Output>) {
        let timers = StageTimers()
        let delivery = plan.delivery.makeCore()
        let head = plan.stages.build(StageInlet(DeliveryStage(core: delivery)), timers)
        let intake = ReceptionistCore<StageEvent<Input>>(
            Delivery(on: .immediate, buffering: .unbounded) { event in
                switch event {
                case .element(let element):
                    head.receive(element)
                case .timer(let fire):
                    fire.node.timerFired(generation: fire.generation)
                case .flush:
                    head.flush()
                case .finish:
                    head.finish()
                    timers.cancelAll()
                }
            },
            overflowTarget: DispatchQueue.stageQueue
        )
        self.init(intake: intake, timers: timers, delivery: delivery)
    }

    @usableFromInline
    init<Output>(intake: ReceptionistCore<StageEvent<Input>>, timers: StageTimers, delivery: ReceptionistCore<Output>) {
        timers.connect { [weak intake] fire in intake?.send(.timer(fire)) }
        self.intake = intake
        self.timers = timers
        self.delivery = delivery
    }

    @inlinable
    func send(_ element: Input) -> Bool {
        intake.send(.element(element))
    }

    /// Hands on what the stages hold now; see ``Receptionist/flush()``.
    @usableFromInline
    func flush() {
        intake.send(.flush)
    }

    /// No more input: the stages hand on what they hold, then delivery finishes.
    @usableFromInline
    func finish() {
        intake.finish(appending: .finish)
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
        timers.cancelAll()
        delivery.cancel()
    }

    /// What the owner's `deinit` does: cancel, unless ``finish()`` was called, in which case the
    /// stages still hand on what they hold and everything is delivered.
    func ownerReleased() {
        if intake.lifecycle == .active { cancel() }
    }

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
    @usableFromInline
    var statistics: ReceptionistStatistics { delivery.statistics }
}

/// An event entering a pipeline's intake.
@usableFromInline
enum StageEvent<Input: Sendable>: Sendable {
    case element(Input)
    case timer(TimerFire)
    case flush
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
    /// ``StagedPipeline``).
    @usableFromInline
    static let stageQueue = DispatchQueue(
        label: "Receptionist.stages",
        qos: .userInitiated,
        attributes: .concurrent
    )
}
