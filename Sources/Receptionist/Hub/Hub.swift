/// A publish/subscribe hub: posters post typed payloads on named channels, and every subscriber
/// of a channel gets them on the target it chose, without posters and subscribers knowing each
/// other.
///
/// ```swift
/// struct Enemy: Sendable { var name: String }
/// extension Hub.Channel where Payload == Enemy {
///     static let enemyAdded = Hub.Channel<Enemy>("enemyAdded")
/// }
///
/// let subscription = Hub.default.subscribe(to: .enemyAdded, on: .mainActor) { enemy in
///     print(enemy.name)                                  // main-actor isolated
/// }
/// Hub.default.post(.enemyAdded, Enemy(name: "bat"))      // any thread; never waits
/// subscription.cancel()                                   // or release it
/// ```
///
/// Use ``default`` to share one hub across an app, or create independent hubs (per document, per
/// test); posts on one hub never reach subscribers of another.
///
/// A subscriber can have stages of its own (throttle, batch, debounce, …) in front of its block:
/// start it with ``pipeline(for:from:)``, so that one post stream feeds several pipelines.
///
/// ## Threading contract
/// - **Where:** each subscriber's block runs on the target it chose in
///   ``subscribe(to:from:on:_:)-(_,_,DeliveryTarget,_)``: a `DispatchQueue`, an `OperationQueue`,
///   the main actor, ``DeliveryTarget/immediate`` (on the posting thread), or any
///   ``DeliveryTarget``.
/// - **Never blocks:** ``post(_:_:from:)`` may be called from any thread. It hands the payload to
///   each subscriber's own ``Receptionist`` (lossless, unbounded, unless a pipeline's policy
///   drops) and returns without waiting for any subscriber's target; a slow subscriber delays
///   neither the poster nor other subscribers. Only subscribers on ``DeliveryTarget/immediate``
///   run on the posting thread, before `post` returns (unless that subscriber is already being
///   delivered to on another thread, which then delivers the payload too), and so do the stages
///   of a subscriber started with ``pipeline(for:from:)``, as ``Pipeline`` describes. No
///   subscriber makes a post wait for room: ``BufferPolicy/waiting(capacity:)`` is rejected.
/// - **Order:** a post is handed to the channel's subscribers in registration order. Each
///   subscriber gets the payloads it accepted one at a time, in the order they were posted: posts
///   made one after another (from one thread, or ordered by other synchronisation) reach every
///   subscriber in that order. Posts made concurrently from several threads may reach different
///   subscribers in different orders, and there is no order between deliveries to different
///   subscribers on asynchronous targets. A post made from inside a block that runs on
///   ``DeliveryTarget/immediate`` is nested in the post being delivered: that block gets it after
///   it returns, but subscribers after it in registration order get it before the outer post (as
///   with `NotificationCenter`).
/// - **Snapshot:** a post reaches the subscribers registered when it starts. A subscription made
///   while a post is under way (for example from a subscriber's block) does not get that post;
///   one cancelled before its delivery runs is not called.
/// - **Lifetimes:** the hub keeps each subscriber's block (until it is cancelled) and nothing
///   else: not the subscriber's owner, not the ``Subscription``, not senders. A sender filter
///   holds its sender weakly and compares identity; it matches no post made without a sender,
///   and once its sender is deallocated it matches no post at all (the subscription stays until
///   cancelled).
/// - **Re-entrancy:** no lock of the hub is held while a subscriber's block runs: a block may
///   post, subscribe, and cancel any subscription, its own included.
public final class Hub: Sendable {
    /// The hub shared by the whole process.
    public static let `default` = Hub()

    /// The subscribers, by channel.
    @usableFromInline
    let registry = Locked(HubRegistry())

    /// Creates a hub, independent of ``default`` and of every other hub.
    public init() {}

    /// Subscribes `handler` to `channel`: from now on it runs on `target` for every payload
    /// posted on `channel` (from `sender`, if given).
    ///
    /// - Parameters:
    ///   - channel: the channel to subscribe to; its payload type is `handler`'s parameter type.
    ///   - sender: if not `nil`, only posts made `from:` this very object reach `handler`. Held
    ///     weakly: once `sender` is deallocated, no post reaches `handler`.
    ///   - target: where `handler` runs.
    ///   - handler: the subscriber's block. Runs on `target`, one payload at a time, in posting
    ///     order.
    /// - Returns: the subscription. Keep it for as long as you want payloads; cancelling or
    ///   releasing it unsubscribes.
    public func subscribe<Payload>(
        to channel: Channel<Payload>,
        from sender: AnyObject? = nil,
        on target: some DeliveryTarget,
        _ handler: @escaping @Sendable (Payload) -> Void
    ) -> Subscription {
        subscribe(to: channel, from: sender, Delivery(on: target, buffering: .unbounded, handler))
    }

    /// Subscribes a delivery to `channel`: what every public `subscribe` does.
    func subscribe<Payload>(to channel: Channel<Payload>, from sender: AnyObject?, _ delivery: Delivery<Payload>)
        -> Subscription
    {
        subscribe(
            ChannelSubscriber(sender: sender.map(SenderFilter.init), receptionist: Receptionist(delivery: delivery)),
            to: channel
        )
    }

    /// Registers `subscriber` on `channel`, after its other subscribers: what every `subscribe`
    /// and every pipeline started from ``pipeline(for:from:)`` does.
    func subscribe<Payload>(_ subscriber: ChannelSubscriber<Payload>, to channel: Channel<Payload>) -> Subscription {
        let key = channel.key
        let id = registry.withLock { $0.add(subscriber, to: key) }
        return Subscription(hub: self, key: key, id: id, subscriber: subscriber)
    }

    /// Posts `payload` to `channel`'s subscribers. Callable from any thread.
    ///
    /// Hands `payload` to each subscriber registered now, in registration order, and returns
    /// without waiting for asynchronous targets (subscribers on ``DeliveryTarget/immediate`` run
    /// on this thread first).
    ///
    /// - Parameters:
    ///   - channel: the channel to post on.
    ///   - payload: what the subscribers get.
    ///   - sender: the object posting, for subscribers that take posts only from it. Compared by
    ///     identity; not retained.
    /// - Returns: how many subscribers accepted `payload`. A subscriber cancelled afterwards, but
    ///   before its block ran, discards it.
    @inlinable  // specialised for the payload: generic, each subscriber looked up type metadata
    @discardableResult
    public func post<Payload>(_ channel: Channel<Payload>, _ payload: Payload, from sender: AnyObject? = nil) -> Int {
        let entries = registry.withLock { $0.subscribers(of: channel.key) }
        var reached = 0
        for entry in entries {
            // The registry files subscribers by name and payload type: each is a
            // `ChannelSubscriber<Payload>` (checked in debug builds).
            // Unsafe: no dynamic cast per subscriber; unsafeDowncast checks it in debug builds (row: "Hub.post, n subscribers of the channel (.immediate)")
            let subscriber = unsafeDowncast(entry.subscriber as AnyObject, to: ChannelSubscriber<Payload>.self)
            if subscriber.deliver(payload, from: sender) { reached += 1 }
        }
        return reached
    }

    /// Posts on a channel without payload. Callable from any thread; see ``post(_:_:from:)``.
    ///
    /// - Parameters:
    ///   - channel: the channel to post on.
    ///   - sender: the object posting, for subscribers that take posts only from it.
    /// - Returns: how many subscribers accepted the post.
    @discardableResult
    public func post(_ channel: Channel<Void>, from sender: AnyObject? = nil) -> Int {
        post(channel, (), from: sender)
    }

    /// Forgets the subscriber `id` of `key`'s channel, if the hub still has it.
    func remove(_ id: UInt64, from key: ChannelKey) {
        registry.withLockThenRelease { ((), released: $0.remove(id, from: key)) }
    }
}
