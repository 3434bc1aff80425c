import Dispatch

/// The stages of a pipeline whose source feeds them through a delivery engine of its own (an
/// observation, a tracking), whatever their input type.
@usableFromInline
protocol StagesControl: Sendable {
    func flush()
    func whenEnded(_ completion: @escaping @Sendable () -> Void)
    func cancel()
    var isCancelled: Bool { get }
    var isFinished: Bool { get }
    var statistics: ReceptionistStatistics { get }
    /// See ``Receptionist/writability``.
    var writability: Writability { get }
    /// See ``Receptionist/whenWritable(on:_:)``.
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void)
    /// See ``Receptionist/onWritabilityChange(on:_:)``.
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener
    /// Where the stages continue when a burst keeps their intake busy.
    var stageQueue: DispatchQueue { get }
}

extension StagedPipeline: StagesControl {}

/// Feeds a source's values into its stages; held by the handler of the source's delivery engine,
/// so that when that engine ends (finished, or its model gone) and lets go of its handler, the
/// stages finish too, after the last value.
@usableFromInline
final class StagesFeed<Value: Sendable>: Sendable {
    @usableFromInline
    let stages: StagedPipeline<Value>

    @usableFromInline
    init(_ stages: StagedPipeline<Value>) {
        self.stages = stages
    }

    @inlinable
    func send(_ value: Value) {
        _ = stages.send(value)
    }

    deinit {
        stages.finish()
    }
}

/// Where an observation with stages puts each change: straight into its pipeline's intake, by
/// the write, under the model's lock, so that the intake's order is the order of the writes.
///
/// The intake is then the only buffer in front of the stages, and the write that finds it idle
/// drains it on its own thread after the lock (up to the drain budget, then the drain continues
/// on the stage queue), as a hub post or a staged receptionist's send does. The writers so pay
/// for the stages of their own writes whenever the stages keep up, and the backlog waits where
/// the pipeline's policy bounds it and its statistics count it. (Buffered by the observation
/// first, and fed to the stages one change at a time by the observation's drain, each change
/// would pay a claim of the idle intake and a release of it, two more lock round trips, on the
/// one thread that runs the stages, and writers that only append would outrun it; see
/// Benchmarks/README.md, "Flow control".)
@usableFromInline
final class StagesIntake<Input: Sendable>: Sendable {
    @usableFromInline
    let stages: StagedPipeline<Input>
    /// Drains the intake; formed once, so that a write that must drain it copies a reference.
    @usableFromInline
    let drain: @Sendable () -> Void

    /// Only for a pipeline whose senders never wait (``StagedPipeline/intake`` drains inline):
    /// a write cannot wait for room.
    ///
    /// Inlinable, so that `drain` is formed where `Input` is known: formed here, it ran the
    /// intake's drain unspecialised, looking up generic and tuple metadata at run time for every
    /// change (4.3× the instructions of the same stages behind a hub: the "writers" section).
    @inlinable
    init(_ stages: StagedPipeline<Input>) {
        precondition(!stages.intake.waits, "Internal inconsistency: a write cannot wait for room in front of stages")
        self.stages = stages
        let intake = stages.intake
        drain = { intake.submitDrain() }
    }

    /// Buffers `element` in front of the stages, under the model's lock (`lock` is its proof): no
    /// user code runs, and the drain to submit and what the intake did not keep (an element it
    /// rejected or dropped, which may hold the last reference to a value) go to `batch`, for
    /// after the lock.
    @inlinable
    func enqueue(_ element: consuming Input, batch: inout WriteBatch, _ lock: borrowing ModelLock) {
        // A dropping policy bounds what waits for the stages, as ``StagedPipeline/send(_:)`` does.
        if let bound = stages.intakeBound, !bound.admit() {
            if stages.isActive { stages.recordDroppedInput() }
            batch.release(element)
            return
        }
        let outcome = stages.intake.enqueue(.element(element))
        if outcome.action == .rejected { stages.intakeBound?.taken() }
        if let evicted = outcome.evicted { batch.release(evicted) }
        if outcome.needsDrain { batch.submitAfterwards(drain) }
        for waiter in outcome.wake { batch.submitAfterwards { waiter.wake() } }
    }
}
