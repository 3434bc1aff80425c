/// The source of a pipeline fed by ``Receptionist/send(_:)``: start one with
/// ``Receptionist/pipeline(of:)``.
///
/// ```swift
/// let batcher = Receptionist.pipeline(of: Reading.self)
///     .batch(count: 100, every: .milliseconds(50))
///     .deliver(on: DispatchQueue.main) { batch in chart.append(batch) }
/// batcher.send(reading)   // any thread
/// ```
public struct ReceptionistInput<Event: Sendable>: PipelineSource {
    public typealias Element = Event

    @usableFromInline
    init() {}
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

extension Pipeline {
    /// Starts the pipeline: returns the receptionist to send events to; each output of the last
    /// stage runs `task` on `target`.
    ///
    /// See ``Pipeline`` for the threading contract: stages run on the sending thread (or a
    /// time-based stage's scheduler), `task` on `target`, in order.
    ///
    /// - Parameters:
    ///   - target: where `task` runs.
    ///   - policy: how many outputs may wait for `task`, and which to drop beyond that.
    ///   - task: the task block.
    /// - Returns: the receptionist to ``Receptionist/send(_:)`` events to. Releasing it cancels
    ///   the pipeline.
    @inlinable
    public func deliver<Event>(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (Output) -> Void
    ) -> Receptionist<Event> where Source == ReceptionistInput<Event> {
        start(ReceptionistCore(target: target, policy: policy, handler: task))
    }

    /// Starts the pipeline with a task block isolated to the main actor; see
    /// ``deliver(on:buffering:_:)-(DeliveryTarget,_,_)->Receptionist<Event>``.
    @inlinable
    public func deliver<Event>(
        on target: MainActorTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (Output) -> Void
    ) -> Receptionist<Event> where Source == ReceptionistInput<Event> {
        start(
            ReceptionistCore(target: MainActorTarget.queue, policy: policy) { output in
                MainActor.assumeIsolated { task(output) }
            })
    }

    @inlinable
    func start<Event>(_ delivery: ReceptionistCore<Output>) -> Receptionist<Event>
    where Source == ReceptionistInput<Event> {
        if let direct = stages.direct {
            return Receptionist(core: direct(delivery))
        }
        return Receptionist(pipeline: StagedPipeline(stages: stages, delivery: delivery))
    }
}
