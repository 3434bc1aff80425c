/// What keeps a delivery running: a ``Receptionist``, an ``ObservationToken``, a
/// ``Hub/Subscription``.
///
/// Every handle stops its delivery when released (unless it was finished) and reports the same
/// counters. Keep handles of different kinds together in a `Set<AnyDeliveryHandle>`, as with
/// Combine's `AnyCancellable`:
///
/// ```swift
/// var handles = Set<AnyDeliveryHandle>()
/// model.receptionist(for: \.progress).deliver(on: .mainActor) { … }.store(in: &handles)
/// Hub.default.subscribe(to: .levelReset, on: .mainActor) { … }.store(in: &handles)
/// handles.removeAll()        // cancels them all
/// ```
///
/// ## Contract
/// - ``cancel()`` is idempotent and callable from any thread, including from inside the
///   delivery's own task block. Once it returns no task block starts, except one that a drain on
///   another thread had already started (it may finish). What is pending is discarded and
///   counted in ``ReceptionistStatistics/discarded``; the task block and what it captured are
///   released.
/// - ``finish()`` stops taking new input; everything already taken is delivered, in order, then
///   the task block is released and ``isFinished`` becomes `true`. A handle may be released
///   right after `finish()`: releasing a finishing handle does not cancel it.
/// - Releasing the last reference to a handle that was not finished cancels it.
public protocol DeliveryHandle: AnyObject, Sendable {
    /// Stops delivery at once and discards what is pending.
    func cancel()
    /// Stops taking input; what was taken is still delivered, then the task block is released.
    func finish()
    /// Whether ``cancel()`` stopped the delivery (a cancel after it finished has no effect).
    var isCancelled: Bool { get }
    /// Whether the delivery ended after ``finish()``, everything delivered.
    var isFinished: Bool { get }
    /// Counts of what the delivery received, delivered, dropped and discarded.
    var statistics: ReceptionistStatistics { get }
}

extension DeliveryHandle {
    /// Keeps this handle in `set`, like Combine's `AnyCancellable.store(in:)`.
    public func store(in set: inout Set<AnyDeliveryHandle>) {
        set.insert(AnyDeliveryHandle(self))
    }
}

/// A ``DeliveryHandle`` of any kind, hashable by identity: keep handles in a
/// `Set<AnyDeliveryHandle>` with ``DeliveryHandle/store(in:)``. The set holds them strongly:
/// removing a handle from it (or dropping the set) releases the handle, which cancels it unless
/// it was finished.
public struct AnyDeliveryHandle: Hashable, Sendable {
    /// The handle.
    public let base: any DeliveryHandle

    /// Wraps `base`.
    public init(_ base: any DeliveryHandle) {
        self.base = base
    }

    public static func == (lhs: AnyDeliveryHandle, rhs: AnyDeliveryHandle) -> Bool {
        lhs.base === rhs.base
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(base))
    }
}
