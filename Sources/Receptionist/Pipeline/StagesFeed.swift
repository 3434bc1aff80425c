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
    /// See ``Receptionist/isWritable``.
    var isWritable: Bool { get }
    /// See ``Receptionist/whenWritable(on:_:)``.
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable () -> Void)
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
