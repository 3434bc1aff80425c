/// A weak reference to a `Sendable` object.
final class WeakReference: Sendable {
    /// `nonisolated(unsafe)` because `AnyObject` is not `Sendable`: the initialiser only accepts
    /// `Sendable` values, and the reference is never reassigned.
    nonisolated(unsafe) weak var object: AnyObject?

    init<Value: Sendable>(_ value: Value) {
        object = value as AnyObject
    }
}

/// One registration in an ``ObserverSet``: a weak reference to the observer and, for an
/// observer added with a target, the receptionist that bounces its messages there.
final class ObserverEntry<Observer: Sendable>: Sendable {
    typealias Message = @Sendable (Observer) -> Void

    /// The observer's identity, kept so that an observer can be removed from its own `deinit`
    /// (when the weak reference already reads `nil`).
    let identity: ObjectIdentifier
    let reference: WeakReference
    /// Set by `remove`; a notification round checks it before each call.
    let removedFlag = AtomicValue<Bool>(false)
    /// `nil` for an observer called synchronously on the notifying thread. Its task block holds
    /// the observer weakly; removing the entry cancels it.
    let delivery: Receptionist<Message>?

    init(reference: WeakReference, identity: ObjectIdentifier, delivery: Receptionist<Message>?) {
        self.identity = identity
        self.reference = reference
        self.delivery = delivery
    }

    var object: AnyObject? { reference.object }

    var isRemoved: Bool { removedFlag.load(ordering: .acquiring) }

    /// The observer, if it is alive and still registered.
    var observer: Observer? {
        guard !isRemoved, let object else { return nil }
        return object as? Observer
    }

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
