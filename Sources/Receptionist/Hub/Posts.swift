extension Hub {
    /// The source of a pipeline fed by the posts on one ``Hub`` channel: start one with
    /// ``Hub/pipeline(for:from:)``.
    ///
    /// Each `deliver` starts one subscriber of the channel, with its own stages, target and task
    /// block, and returns its ``Subscription``.
    public struct Posts<Payload: Sendable>: PipelineSource {
        let hub: Hub
        let channel: Channel<Payload>
        /// `nil` to take posts from every sender.
        let sender: SenderFilter?

        /// Starts the pipeline and subscribes it to the channel, after the subscribers it already
        /// has.
        ///
        /// A ``BufferPolicy/waiting(capacity:)`` policy is rejected (the program stops with a
        /// message naming `buffering`): a post never waits for a subscriber.
        // Inlinable although it runs once: the stages' intake handler, formed in `plan.start()`,
        // runs for every post, and formed unspecialised it would run as generic code (a post to a
        // staged subscriber: Benchmarks/README.md, "Scale").
        @inlinable
        public func start<Output>(_ plan: PipelinePlan<Payload, Output>) -> Subscription {
            Self.refuseWaiting(plan.delivery.policy)
            return subscribe(plan.start())
        }

        /// Stops the program if `policy` would make a post wait for room.
        @usableFromInline
        static func refuseWaiting(_ policy: BufferPolicy) {
            validate(
                policy.kind != .waiting,
                "Hub.pipeline(for:from:) deliver(on:buffering:_:) buffering must not be \(policy): a post "
                    + "never waits for a subscriber; use .unbounded or a dropping policy"
            )
        }

        /// Subscribes the started pipeline, fed through `receptionist`, to the channel.
        @usableFromInline
        func subscribe(_ receptionist: Receptionist<Payload>) -> Subscription {
            hub.subscribe(ChannelSubscriber(sender: sender, receptionist: receptionist), to: channel)
        }
    }

    /// Starts describing a subscriber of `channel` whose payloads pass through stages of its
    /// own before its task block: add stages, then `deliver(on:)` subscribes it and returns its
    /// ``Subscription``.
    ///
    /// One post stream can feed several pipelines, each with its own stages and target:
    ///
    /// ```swift
    /// let hub = Hub()
    /// let readings = Hub.Channel<Double>("readings")
    /// let uploadQueue = DispatchQueue(label: "upload")
    /// let display = hub.pipeline(for: readings)
    ///     .throttle(for: .milliseconds(100), latest: true)
    ///     .deliver(on: .mainActor) { value in print("gauge:", value) }
    /// let upload = hub.pipeline(for: readings)
    ///     .batch(count: 100, every: .seconds(1))
    ///     .deliver(on: uploadQueue) { values in print("upload:", values) }
    /// hub.post(readings, 21.5)   // any thread; reaches both, each through its stages
    /// ```
    ///
    /// ## Threading contract
    /// The hub's (see ``Hub``), with the pipeline's stages in front of the task block:
    /// - **Never waits:** a post hands the payload to the pipeline's stages and returns; it never
    ///   waits for the target, nor for room (a ``BufferPolicy/waiting(capacity:)`` policy is
    ///   rejected at `deliver`, naming `buffering`; a dropping policy bounds the stages' input and
    ///   drops there, counted). The stages run as ``Pipeline`` describes for a receptionist's
    ///   sends: on the posting thread, unless another thread is already running them (which then
    ///   runs them for this post too), or on a time-based stage's scheduler; keep stage closures
    ///   short and free of blocking.
    /// - **Order:** the stages see the posts this subscriber accepted in the order ``Hub``
    ///   describes for a subscriber's block, and the task block gets their outputs one at a time,
    ///   in order.
    /// - **Snapshot:** `deliver` subscribes when it returns; a post under way then does not reach
    ///   the pipeline.
    /// - **Cancel and finish** are a pipeline's (``Pipeline``): ``Subscription/cancel()`` (or
    ///   releasing the subscription) discards what the stages hold and what waits for the target;
    ///   ``Subscription/finish()`` unsubscribes, the stages hand on what they hold (a partial
    ///   batch, a held throttle value, a pending debounce value), everything is delivered, then
    ///   the task block is released. ``Subscription/flush()`` hands on what the stages hold
    ///   without ending the subscription.
    /// - **Lifetimes:** the hub keeps the pipeline (its stages and task block) until it is
    ///   cancelled or finished, and nothing else.
    ///
    /// - Parameters:
    ///   - channel: the channel whose posts feed the pipeline.
    ///   - sender: if not `nil`, only posts made `from:` this very object feed it. Held weakly, as
    ///     in ``subscribe(to:from:on:_:)-(_,_,DeliveryTarget,_)``.
    /// - Returns: a pipeline without stages; each `deliver` on it starts one subscriber.
    public func pipeline<Payload>(for channel: Channel<Payload>, from sender: AnyObject? = nil)
        -> Pipeline<Posts<Payload>, Payload>
    {
        Pipeline(source: Posts(hub: self, channel: channel, sender: sender.map(SenderFilter.init)))
    }
}
