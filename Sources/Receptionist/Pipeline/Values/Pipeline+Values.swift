extension Pipeline where Source.Handle == ObservationToken {
    /// Starts the observation and returns its outputs as an asynchronous sequence, to consume
    /// with `for await`.
    ///
    /// The sequence owns the observation: it runs until the sequence ends (the object is
    /// deallocated, or ``PipelineValues/finish()`` was called) or is cancelled (the consuming task
    /// is cancelled, or the iterator dropped). See ``PipelineValues`` for order, buffering, end and
    /// cancellation.
    ///
    /// ```swift
    /// // @unchecked: its only stored property is an @Observed, guarded by the model's lock.
    /// final class Sensor: ObservableModel, @unchecked Sendable { @Observed var reading = 0.0 }
    /// let sensor = Sensor()
    /// let batches = sensor.receptionist(for: \.reading).map(\.newValue).batch(count: 100).values()
    /// Task { try await Task.sleep(for: .seconds(10)); batches.finish() }   // hands on the last, partial batch
    /// for await batch in batches { print(batch) }
    /// ```
    ///
    /// - Parameter policy: how many outputs may wait for the consumer, and which to drop beyond
    ///   that. After `coalesce()`, at most one output waits, whatever the policy.
    public func values(buffering policy: BufferPolicy = .unbounded) -> PipelineValues<Output> {
        let (delivery, channel) = ValuesChannel<Output>.delivery(policy: policy)
        let token = start(delivery)
        return PipelineValues(
            channel: channel,
            statistics: { token.statistics },
            finish: { token.finish() },
            stop: { token.cancel() }
        )
    }
}

extension Pipeline {
    /// Starts the pipeline and returns the receptionist to send events to, with the pipeline's
    /// outputs as an asynchronous sequence, to consume with `for await`.
    ///
    /// ```swift
    /// let (receptionist, batches) = Receptionist.pipeline(of: Int.self).batch(count: 100).values()
    /// ```
    ///
    /// The sequence ends after the last output once you call ``Receptionist/finish()`` (you may
    /// release the receptionist right after). It holds the receptionist weakly: releasing the
    /// receptionist without finishing cancels the pipeline, which ends the sequence at once.
    /// Cancelling the consuming task, or dropping the iterator, cancels the receptionist. See
    /// ``PipelineValues`` for order, buffering, end and cancellation.
    ///
    /// - Parameter policy: how many outputs may wait for the consumer, and which to drop beyond
    ///   that. After `coalesce()`, at most one output waits, whatever the policy.
    /// - Returns: the receptionist to ``Receptionist/send(_:)`` events to (keep it as long as you
    ///   send), and the sequence of outputs.
    public func values<Event>(
        buffering policy: BufferPolicy = .unbounded
    ) -> (receptionist: Receptionist<Event>, values: PipelineValues<Output>) where Source == ReceptionistInput<Event> {
        let (delivery, channel) = ValuesChannel<Output>.delivery(policy: policy)
        let receptionist = start(delivery)
        let control = receptionist.deliveryControl
        let values = PipelineValues(
            channel: channel,
            statistics: { control.statistics },
            finish: { [weak receptionist] in receptionist?.finish() },
            stop: { [weak receptionist] in
                receptionist?.cancel()
                // Also once the receptionist finished and was released: the outputs still
                // waiting for this consumer are discarded rather than left in the buffer.
                control.cancel()
            }
        )
        return (receptionist, values)
    }
}
