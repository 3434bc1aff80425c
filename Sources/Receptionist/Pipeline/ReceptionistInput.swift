/// The source of a pipeline fed by ``Receptionist/send(_:)``: start one with
/// ``Receptionist/pipeline(of:)``.
///
/// ```swift
/// let batcher = Receptionist.pipeline(of: Double.self)
///     .batch(count: 100, every: .milliseconds(50))
///     .deliver(on: DispatchQueue.main) { batch in print(batch) }
/// batcher.send(21.5)   // any thread
/// ```
public struct ReceptionistInput<Event: Sendable>: PipelineSource {
    @usableFromInline
    init() {}

    /// Starts the pipeline and returns the receptionist to send events to.
    @inlinable
    public func start<Output>(_ plan: PipelinePlan<Event, Output>) -> Receptionist<Event> {
        plan.start()
    }
}

extension Receptionist {
    /// Starts describing a receptionist whose events pass through stages before delivery.
    ///
    /// Add stages, then call `deliver(on:)` to get the ``Receptionist`` you send events to. See
    /// ``Pipeline`` for the threading contract.
    ///
    /// - Parameter type: the type of the events you will send.
    @inlinable
    public static func pipeline(of type: Event.Type = Event.self) -> Pipeline<ReceptionistInput<Event>, Event> {
        Pipeline(source: ReceptionistInput())
    }
}
