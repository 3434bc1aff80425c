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
    @usableFromInline
    let timers: StageTimers
    @usableFromInline
    let delivery: any DeliveryControl

    @inlinable
    init<Output>(stages: StageChain<Input, Output>, delivery: ReceptionistCore<Output>) {
        let timers = StageTimers()
        let head = stages.build(StageInlet(DeliveryStage(core: delivery)), timers)
        let intake = ReceptionistCore<StageEvent<Input>>(
            target: .immediate,
            policy: .unbounded,
            overflowTarget: DispatchQueue.stageQueue
        ) { event in
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
        }
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
    @usableFromInline
    func ownerReleased() {
        if isActive { cancel() }
    }

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
@usableFromInline
protocol DeliveryControl: Sendable {
    func cancel()
    var isCancelled: Bool { get }
    var isFinished: Bool { get }
    var statistics: ReceptionistStatistics { get }
}

extension ReceptionistCore: DeliveryControl {
    @usableFromInline
    var isFinished: Bool { lifecycle == .finished }
}
