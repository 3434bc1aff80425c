extension Pipeline {
    /// Starts the observation and returns its outputs as an asynchronous sequence, to consume
    /// with `for await`.
    ///
    /// The sequence owns the observation: it runs until the sequence ends (the object is
    /// deallocated) or is cancelled (the consuming task is cancelled, or the iterator dropped).
    /// See ``PipelineValues`` for order, buffering, end and cancellation.
    ///
    /// - Parameter policy: how many outputs may wait for the consumer, and which to drop beyond
    ///   that.
    public func values<Object, Value>(
        buffering policy: BufferPolicy = .unbounded
    ) -> PipelineValues<Output> where Source == ObservedProperty<Object, Value> {
        observedValues(ValuesChannel.delivery(policy: policy))
    }

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
    ///   that.
    /// - Returns: the receptionist to ``Receptionist/send(_:)`` events to (keep it as long as you
    ///   send), and the sequence of outputs.
    public func values<Event>(
        buffering policy: BufferPolicy = .unbounded
    ) -> (receptionist: Receptionist<Event>, values: PipelineValues<Output>) where Source == ReceptionistInput<Event> {
        sentValues(ValuesChannel.delivery(policy: policy))
    }

    func observedValues<Object, Value>(
        _ delivery: (core: ReceptionistCore<Output>, channel: ValuesChannel<Output>)
    ) -> PipelineValues<Output> where Source == ObservedProperty<Object, Value> {
        let token = start(delivery.core)
        return PipelineValues(channel: delivery.channel, delivery: delivery.core) { token.cancel() }
    }

    func sentValues<Event>(
        _ delivery: (core: ReceptionistCore<Output>, channel: ValuesChannel<Output>)
    ) -> (receptionist: Receptionist<Event>, values: PipelineValues<Output>) where Source == ReceptionistInput<Event> {
        let receptionist: Receptionist<Event> = start(delivery.core)
        let values = PipelineValues(channel: delivery.channel, delivery: delivery.core) { [weak receptionist] in
            receptionist?.cancel()
        }
        return (receptionist, values)
    }
}

extension CoalescingPipeline {
    /// Starts the observation and returns its outputs as an asynchronous sequence: each time the
    /// consumer asks for the next one, it gets the latest state, with everything that happened
    /// since the previous one folded into it.
    ///
    /// At most one output waits for the consumer. See ``PipelineValues`` for end and cancellation.
    public func values<Object, Value>() -> PipelineValues<Output> where Source == ObservedProperty<Object, Value> {
        pipeline.observedValues(ValuesChannel.delivery(policy: .unbounded, merge: merge))
    }

    /// Starts the pipeline and returns the receptionist to send events to, with the coalesced
    /// outputs as an asynchronous sequence: at most one output waits for the consumer.
    ///
    /// See ``Pipeline/values(buffering:)-(BufferPolicy)->(Receptionist<Event>,PipelineValues<Output>)``
    /// for the receptionist's part, ``PipelineValues`` for the rest.
    public func values<Event>() -> (receptionist: Receptionist<Event>, values: PipelineValues<Output>)
    where Source == ReceptionistInput<Event> {
        pipeline.sentValues(ValuesChannel.delivery(policy: .unbounded, merge: merge))
    }
}
