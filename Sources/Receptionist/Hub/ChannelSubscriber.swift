/// A subscriber as a ``Hub`` and its ``Hub/Subscription`` see it, whatever its payload type.
@usableFromInline
protocol HubSubscriber: AnyObject, Sendable {
    /// Stops delivery at once (``Receptionist/cancel()``).
    func cancel()
    /// Makes the stages hand on what they hold now (``Receptionist/flush()``).
    func flush()
    /// Stops taking payloads; those accepted are still delivered (``Receptionist/finish()``).
    func finish()
    func finish(completion: @escaping @Sendable () -> Void)
    var isCancelled: Bool { get }
    var isFinished: Bool { get }
    /// Whether ``finish()`` was called (the delivery may still be running).
    var isFinishing: Bool { get }
    var statistics: ReceptionistStatistics { get }
    /// See ``Receptionist/writability``.
    var writability: Writability { get }
    /// See ``Receptionist/whenWritable(on:_:)``.
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void)
    /// See ``Receptionist/onWritabilityChange(on:_:)``.
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener
}

/// One subscription to a channel carrying `Payload`: its optional sender filter and the
/// receptionist that delivers to the subscriber's block on the subscriber's target (through the
/// stages of a pipeline started from ``Hub/pipeline(for:from:)``, if it has any).
@usableFromInline
final class ChannelSubscriber<Payload: Sendable>: HubSubscriber {
    @usableFromInline let receptionist: Receptionist<Payload>
    /// `nil` to take posts from every sender.
    @usableFromInline let sender: SenderFilter?

    init(sender: SenderFilter?, receptionist: Receptionist<Payload>) {
        self.sender = sender
        self.receptionist = receptionist
    }

    /// Hands `payload` to the receptionist if the filter lets posts from `poster` through.
    ///
    /// - Returns: whether the receptionist accepted it.
    @inlinable
    func deliver(_ payload: Payload, from poster: AnyObject?) -> Bool {
        if let sender, !sender.matches(poster) { return false }
        return receptionist.send(payload).isAccepted
    }

    @usableFromInline
    func cancel() { receptionist.cancel() }
    @usableFromInline
    func flush() { receptionist.flush() }
    @usableFromInline
    func finish() { receptionist.finish() }
    @usableFromInline
    func finish(completion: @escaping @Sendable () -> Void) { receptionist.finish(completion: completion) }
    @usableFromInline
    var isCancelled: Bool { receptionist.isCancelled }
    @usableFromInline
    var isFinished: Bool { receptionist.isFinished }
    @usableFromInline
    var isFinishing: Bool { !receptionist.isActive }
    @usableFromInline
    var statistics: ReceptionistStatistics { receptionist.statistics }
    @usableFromInline
    var writability: Writability { receptionist.writability }

    @usableFromInline
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        receptionist.onWritabilityChange(on: target, handler)
    }

    @usableFromInline
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {
        receptionist.whenWritable(on: target, resume)
    }
}

/// Matches posts from one object, without keeping it alive.
///
/// The object is held weakly and never used except to tell whether it is still alive: once it
/// is deallocated, the filter matches nothing, not even a new object at the same address.
@usableFromInline
final class SenderFilter: Sendable {
    private let identifier: ObjectIdentifier
    /// `nonisolated(unsafe)` because `AnyObject` is not `Sendable`. Sound: the reference is
    /// immutable, loading a weak reference is thread-safe, and the object is never used, only
    /// checked for `nil`. (A `Locked` would not help the checker: the object would still have to
    /// cross into it.)
    // Unsafe: a weak AnyObject cannot be Sendable-checked; immutable, only compared with nil (test: HubTests)
    private nonisolated(unsafe) weak let object: AnyObject?

    init(_ object: AnyObject) {
        identifier = ObjectIdentifier(object)
        self.object = object
    }

    /// Whether `poster` is the object this filter was made for.
    ///
    /// When the identifiers match, `poster` (alive, held by the caller) is at the address the
    /// filter's object had; the filter's object is that same object if and only if it is still
    /// alive. So the weak reference is loaded only when it is `nil` or `poster`, and its release
    /// is never the last one (no deinitialiser runs here).
    @usableFromInline
    func matches(_ poster: AnyObject?) -> Bool {
        guard let poster, ObjectIdentifier(poster) == identifier else { return false }
        return object != nil
    }
}
