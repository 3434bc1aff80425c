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
}
