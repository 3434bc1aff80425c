/// A weak reference to a `Sendable` object.
@usableFromInline
final class WeakReference: Sendable {
    /// `nonisolated(unsafe)` because `AnyObject` is not `Sendable`: the initialiser only accepts
    /// `Sendable` values, and the reference is never reassigned.
    // Unsafe: a weak AnyObject cannot be Sendable-checked; only Sendable objects go in, never reassigned (test: ObserverSetTests)
    @usableFromInline nonisolated(unsafe) weak var object: AnyObject?
    /// For an observer with a target: set by its task block once it found the object gone, so
    /// that notifications learn it without loading the weak reference themselves (a load
    /// retains and releases the observer through its side table, which the task block on the
    /// target touches too, so under contention the two threads would keep taking that memory
    /// from each other on every notification).
    @usableFromInline let foundGone = AtomicValue<Bool>(false)

    init<Value: Sendable>(_ value: Value) {
        object = value as AnyObject
    }

    /// The object, or `nil` (and ``foundGone`` set) if it was deallocated.
    @inlinable
    var objectMarkingGone: AnyObject? {
        let loaded = object
        if loaded == nil { foundGone.store(true, ordering: .relaxed) }
        return loaded
    }
}

/// An observer as the set was given it, kept without owning it, so that a notification turns
/// the live object its weak reference loads back into an `Observer` without a dynamic cast
/// (which looks the conformance up for every observer in every round, and costs more than the
/// rest of the call).
///
/// The observer's bytes are copied when it is added (no retain) and never destroyed. Loading them
/// back copies the value (one retain, released with the copy), which is sound only while the
/// object they refer to is alive: ``observer(_:)`` takes that object, as loaded from the weak
/// reference, and the caller keeps it alive while it uses the result. An observer too large for
/// the buffer (an existential of a protocol that is not class-bound) is cast instead.
@usableFromInline
struct UnownedObserver<Observer>: Sendable {
    // Sendable: plain bytes; what they refer to is only used as `observer(_:)` says.
    @usableFromInline let bytes: (UInt, UInt, UInt, UInt)
    @usableFromInline let isStored: Bool

    init(_ observer: Observer) {
        var bytes: (UInt, UInt, UInt, UInt) = (0, 0, 0, 0)
        isStored =
            MemoryLayout<Observer>.size <= MemoryLayout<(UInt, UInt, UInt, UInt)>.size
            && MemoryLayout<Observer>.alignment <= MemoryLayout<UInt>.alignment
        if isStored {
            // Unsafe: the observer's bytes without a retain, no dynamic cast per call (row: "ObserverSet.notify → 1 observer on a DispatchQueue")
            withUnsafeMutableBytes(of: &bytes) { buffer in
                // Unsafe: as above (row: "ObserverSet.notify → 1 observer on a DispatchQueue")
                withUnsafeBytes(of: observer) { buffer.copyMemory(from: $0) }
            }
        }
        self.bytes = bytes
    }

    /// The observer; `object` must be the object it refers to, alive, held by the caller for as
    /// long as it uses the result.
    @inlinable
    func observer(_ object: AnyObject) -> Observer? {
        guard isStored else { return object as? Observer }
        // Unsafe: sound only while `object` is alive, as documented above (row: "ObserverSet.notify → 1 observer on a DispatchQueue")
        return withUnsafeBytes(of: bytes) { $0.load(as: Observer.self) }
    }
}

/// One registration in an ``ObserverSet``: a weak reference to the observer and, for an
/// observer added with a target, the receptionist that bounces its messages there.
@usableFromInline
final class ObserverEntry<Observer: Sendable>: Sendable {
    @usableFromInline
    typealias Message = @Sendable (Observer) -> Void

    /// A message on its way to an observer's target, wrapped: a receptionist of bare closures
    /// stores each behind a reabstraction thunk, which allocates on the notifying thread and
    /// again in the drain for every message (benchmark row "ObserverSet.notify → 1 observer on a
    /// DispatchQueue").
    @usableFromInline
    struct Envelope: Sendable {
        @usableFromInline let message: Message

        @inlinable
        init(_ message: @escaping Message) {
            self.message = message
        }
    }

    /// The observer's identity, kept so that an observer can be removed from its own `deinit`
    /// (when the weak reference already reads `nil`).
    let identity: ObjectIdentifier
    @usableFromInline let reference: WeakReference
    /// The observer, not owned: read it only through ``withObserver(_:)``.
    @usableFromInline let unowned: UnownedObserver<Observer>
    /// Set by `remove`; a notification round checks it before each call.
    @usableFromInline let removedFlag = AtomicValue<Bool>(false)
    /// `nil` for an observer called synchronously on the notifying thread. Its task block holds
    /// the observer weakly; removing the entry cancels it.
    @usableFromInline let delivery: Receptionist<Envelope>?

    init(
        reference: WeakReference,
        unowned: UnownedObserver<Observer>,
        identity: ObjectIdentifier,
        delivery: Receptionist<Envelope>?
    ) {
        self.identity = identity
        self.reference = reference
        self.unowned = unowned
        self.delivery = delivery
    }

    @inlinable
    var object: AnyObject? { reference.object }

    @inlinable
    var isRemoved: Bool { removedFlag.load(ordering: .acquiring) }

    /// Calls `body` with the observer if it is alive and still registered, keeping it alive for
    /// the call; returns whether it did, and whether the observer was found dead (deallocated
    /// while still registered).
    @inlinable
    func withObserver(_ body: (Observer) -> Void) -> (called: Bool, dead: Bool) {
        guard !isRemoved else { return (false, false) }
        guard let object = reference.object else { return (false, true) }
        return withExtendedLifetime(object) {
            guard let observer = unowned.observer(object) else { return (false, false) }
            body(observer)
            return (true, false)
        }
    }

    @inlinable
    var isAlive: Bool { object != nil }

    /// Called by the set, under its lock, as the entry leaves it: no notification round that
    /// checks the flag afterwards calls it.
    func flagRemoved() {
        removedFlag.store(true, ordering: .releasing)
    }

    /// Called once the entry left the set (outside the set's lock): no call starts afterwards,
    /// and the delivery is cancelled (which releases its task block: user code).
    func markRemoved() {
        removedFlag.store(true, ordering: .releasing)
        delivery?.cancel()
    }
}
