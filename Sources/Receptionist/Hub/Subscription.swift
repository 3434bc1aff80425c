extension Hub {
    /// A subscriber's place on a ``Hub`` channel; cancels it when released.
    ///
    /// Returned by ``Hub/subscribe(to:from:on:_:)-(_,_,DeliveryTarget,_)``, and by `deliver` on a
    /// pipeline started with ``Hub/pipeline(for:from:)``. Keep it for as long as you want
    /// payloads, for example in a property of the object that handles them, or in a
    /// `Set<AnyDeliveryHandle>` with ``DeliveryHandle/store(in:)``.
    ///
    /// ## Cancellation contract
    /// ``cancel()`` is idempotent and may be called from any thread, including from inside the
    /// subscriber's own block. Once it returns, the block stops as
    /// <doc:ThreadingGuarantees#Cancel-and-finish> says for a task block; payloads posted
    /// but not yet delivered are discarded (counted in ``ReceptionistStatistics/discarded``), the
    /// hub forgets the subscriber, and the block and what it captured are released (at once, or
    /// when a delivery running on another thread returns). Releasing the last reference to the
    /// subscription cancels it, unless it was finished.
    ///
    /// ``finish()`` unsubscribes without losing anything: payloads already posted are still
    /// delivered, then the block is released. A subscriber with stages hands on what they hold
    /// (a partial batch, a held throttle value, a pending debounce value) on ``finish()`` and
    /// ``flush()``, and discards it on ``cancel()``, as every ``Pipeline`` does.
    public final class Subscription: DeliveryHandle {
        /// Weak: a subscription does not keep its hub alive.
        private weak let hub: Hub?
        private let key: ChannelKey
        private let id: UInt64
        private let subscriber: any HubSubscriber

        init(hub: Hub, key: ChannelKey, id: UInt64, subscriber: any HubSubscriber) {
            self.hub = hub
            self.key = key
            self.id = id
            self.subscriber = subscriber
        }

        deinit {
            if !subscriber.isFinishing { cancel() }
        }

        /// Unsubscribes at once and discards payloads not yet delivered.
        ///
        /// Idempotent; callable from any thread, including from inside the subscriber's block.
        /// Which calls of the block may still start: <doc:ThreadingGuarantees#Cancel-and-finish>.
        public func cancel() {
            // Stop delivery first: a post that took its snapshot before the hub forgets the
            // subscriber then finds it cancelled.
            subscriber.cancel()
            hub?.remove(id, from: key)
        }

        /// Unsubscribes: no post made after this returns reaches the block; the payloads already
        /// posted are still delivered, in order (through the stages, which hand on what they
        /// hold), then the block is released and ``isFinished`` becomes `true`.
        ///
        /// Idempotent; callable from any thread, including from inside the block. Has no effect
        /// after ``cancel()``. The subscription may be released right after.
        public func finish() {
            // Forgotten first: a post made after this returns never sees the subscriber (one that
            // took its snapshot earlier may still be accepted, and is then delivered).
            hub?.remove(id, from: key)
            subscriber.finish()
        }

        /// Makes the subscriber's stages hand on what they hold now (a partial batch, a held
        /// throttle value, a pending debounce value), to be delivered after the outputs already
        /// produced; the subscription keeps running.
        ///
        /// Callable from any thread; may run the stages on this thread, as a post does. Does
        /// nothing for a subscriber without stages, or after ``cancel()`` or ``finish()``.
        public func flush() {
            subscriber.flush()
        }

        /// Finishes as ``finish()`` does, and calls `completion` once every payload it accepted
        /// was delivered and the block released (or once it was cancelled instead).
        public func finish(completion: @escaping @Sendable () -> Void) {
            hub?.remove(id, from: key)
            subscriber.finish(completion: completion)
        }

        /// Whether ``cancel()`` was called (or the subscription was released without finishing).
        public var isCancelled: Bool { subscriber.isCancelled }

        /// Whether the subscription ended after ``finish()``: every payload it accepted was
        /// delivered and the block was released.
        public var isFinished: Bool { subscriber.isFinished }

        /// Counts of payloads this subscriber accepted, got, and discarded on cancel.
        ///
        /// `received` counts the posts that reached it (those a ``Hub/post(_:_:from:)`` counted);
        /// `delivered` those its block finished handling. With stages, they count the last
        /// stage's outputs (for example batches), as for every ``Pipeline``.
        public var statistics: ReceptionistStatistics { subscriber.statistics }

        /// What posters that must not outrun this subscriber are told; see
        /// ``Receptionist/writability``. A post is never refused or paused: a poster reads this,
        /// or listens with ``onWritabilityChange(on:_:)``.
        public var writability: Writability { subscriber.writability }

        /// Runs `resume` once on `target` as soon as posters may go on or the subscription
        /// ended; see ``Receptionist/whenWritable(on:_:)-(_,(Writability)->Void)``.
        public func whenWritable(
            on target: some DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void
        ) {
            subscriber.whenWritable(on: target, resume)
        }

        /// Calls `handler` on `target` with the current writability, then with every change; see
        /// ``Receptionist/onWritabilityChange(on:_:)``.
        @discardableResult
        public func onWritabilityChange(
            on target: some DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
        ) -> WritabilityListener {
            subscriber.onWritabilityChange(on: target, handler)
        }
    }
}
