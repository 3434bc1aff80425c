extension Pipeline {
    /// Starts the pipeline: every element of the source goes through the stages, and each of
    /// their outputs runs `task` on `target`.
    ///
    /// ```swift
    /// // @unchecked: its only stored property is an @Observed, guarded by the model's lock.
    /// final class Thermometer: ObservableModel, @unchecked Sendable { @Observed var celsius = 20.0 }
    /// let thermometer = Thermometer()
    /// let token = thermometer.receptionist(for: \.celsius)
    ///     .deliver(on: DispatchQueue.main) { change in print("\(change.newValue) °C") }
    ///
    /// let receptionist = Receptionist.pipeline(of: Double.self)
    ///     .batch(count: 100)
    ///     .deliver(on: DispatchQueue(label: "log")) { batch in print(batch) }
    /// receptionist.send(21.5)                    // any thread
    /// ```
    ///
    /// ## Threading contract
    /// - `task` runs on `target`, one output at a time, in order, even on a concurrent queue.
    ///   Without stages, the outputs are the source's elements, in the order they were made
    ///   (for an observed property, the order its writes were applied).
    /// - Without stages and with ``BufferPolicy/unbounded`` (the default), every element is
    ///   delivered exactly once; for an observed property the changes form a chain (each
    ///   `oldValue` is the previous `newValue`; the last `newValue` is the final value). A
    ///   bounded policy drops outputs only as it says and counts them. After `coalesce()`, at
    ///   most one output waits and `policy` has nothing left to bound.
    /// - Stages run as ``Pipeline`` describes: in order, outside every lock, on the thread that
    ///   made the change or on a time-based stage's scheduler.
    /// - The returned handle cancels on `cancel()` or when released, and finishes on `finish()`;
    ///   see ``DeliveryHandle``. An observation does not keep its object alive; only changes
    ///   waiting in the pipeline do. When the object is deallocated, the observation finishes:
    ///   stages hand on what they hold, everything is delivered, and the task block is released.
    ///
    /// - Parameters:
    ///   - target: where `task` runs.
    ///   - policy: how many outputs may wait for `task`, and which to drop beyond that.
    ///   - task: the task block.
    /// - Returns: what keeps the pipeline running: an ``ObservationToken`` for an observed or
    ///   tracked property, the ``Receptionist`` to send events to for
    ///   ``Receptionist/pipeline(of:)``. Keep it as long as you want outputs.
    @inlinable
    public func deliver(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (Output) -> Void
    ) -> Source.Handle {
        start(Delivery(on: target, buffering: policy, task))
    }

    /// Starts a pipeline fed by ``Receptionist/send(_:)`` whose watermarks count what its events
    /// weigh (bytes, say), not how many there are.
    ///
    /// ```swift
    /// let lines = Receptionist.pipeline(of: String.self)
    ///     .filter { !$0.isEmpty }
    ///     .deliver(
    ///         on: DispatchQueue(label: "parser"),
    ///         buffering: .watermarks(low: 64 * 1024, high: 256 * 1024),
    ///         weighing: { $0.utf8.count }
    ///     ) { line in print(line) }
    /// ```
    ///
    /// An event weighs what `weighing` says from its `send` until its task block returned: waiting
    /// in front of the stages, then in the output it went into (an output weighs what the events
    /// the stages took for it weighed, including those a `filter` dropped since the previous
    /// output), until that output's task block returned. The rest is as
    /// ``Receptionist/init(on:buffering:weighing:_:)-(_,_,_,(Event)->Void)`` says.
    ///
    /// A time-based stage (`batch(every:)`, `batch(count:every:)`, `throttle`, `debounce`)
    /// keeps elements that are no longer events, so nothing can weigh them: a weighed pipeline
    /// with one stops the program with a message naming the stage, when `deliver` builds it.
    /// `coalesce()` keeps one output, and cannot be weighed either.
    ///
    /// - Parameters:
    ///   - target: where `task` runs.
    ///   - policy: a ``BufferPolicy/watermarks(low:high:)`` policy, its watermarks in weight.
    ///   - weighing: what an event weighs, at least 0; called outside every lock, more than once
    ///     per event (so it must give the same answer each time).
    ///   - task: the task block.
    /// - Returns: the ``Receptionist`` to send events to.
    @inlinable
    public func deliver<Event>(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy,
        weighing: @escaping @Sendable (Event) -> Int,
        _ task: @escaping @Sendable (Output) -> Void
    ) -> Receptionist<Event> where Source == ReceptionistInput<Event> {
        start(Delivery(on: target, buffering: policy, task), weighing: weighing)
    }

    /// Starts the pipeline with `delivery` (any target), its events weighed by `weighing`.
    @inlinable
    func start<Event>(
        _ delivery: Delivery<Output>, weighing: @escaping @Sendable (Event) -> Int
    ) -> Receptionist<Event> where Source == ReceptionistInput<Event> {
        let function = "deliver(on:buffering:weighing:_:)"
        Receptionist<Event>.validateWeighing(delivery.policy, in: function)
        validate(merge == nil, "\(function): coalesce() keeps one output, whose weight nothing can tell")
        return PipelinePlan(stages: stages, delivery: delivery, weigh: weighing).start()
    }
}
