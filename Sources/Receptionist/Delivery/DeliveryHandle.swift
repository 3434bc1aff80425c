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
/// - ``cancel()`` stops delivery at once; what is pending is discarded and counted in
///   ``ReceptionistStatistics/discarded``, and the task block is released. Which task blocks may
///   still start: <doc:ThreadingGuarantees#Cancel-and-finish>.
/// - ``finish()`` stops taking new input; everything already taken is delivered, in order, then
///   the task block is released and ``isFinished`` becomes `true`. A handle may be released
///   right after `finish()`: releasing a finishing handle does not cancel it. To learn when that
///   happened, use ``finish(completion:)`` or `await` ``finishAndWait()``.
/// - Releasing the last reference to a handle that was not finished cancels it.
public protocol DeliveryHandle: AnyObject, Sendable {
    /// Stops delivery at once and discards what is pending.
    func cancel()
    /// Stops taking input; what was taken is still delivered, then the task block is released.
    func finish()
    /// Finishes, and calls `completion` once everything taken was delivered and the task block
    /// released (or once the delivery was cancelled instead): at once, on the calling thread, if
    /// it already ended; otherwise on the thread that ends it, usually the target's (on a cancel,
    /// the cancelling thread, while a task block already started elsewhere may still run:
    /// <doc:ThreadingGuarantees#Cancel-and-finish>).
    func finish(completion: @escaping @Sendable () -> Void)
    /// Whether ``cancel()`` stopped the delivery (a cancel after it finished has no effect).
    var isCancelled: Bool { get }
    /// Whether the delivery ended after ``finish()``, everything delivered.
    var isFinished: Bool { get }
    /// Counts of what the delivery received, delivered, dropped and discarded.
    var statistics: ReceptionistStatistics { get }
}

extension DeliveryHandle {
    /// Finishes, and returns once everything taken was delivered and the task block released (or
    /// once the delivery was cancelled instead).
    ///
    /// ```swift
    /// await receptionist.finishAndWait()    // e.g. before a command-line tool exits
    /// ```
    ///
    /// Do not await it from the delivery's own target while that target is busy running this
    /// await (for example from a task block on a serial queue blocked on a semaphore): the
    /// delivery could not make progress.
    public func finishAndWait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finish { continuation.resume() }
        }
    }

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

    /// Cancels the handle, as Combine's `AnyCancellable.cancel()`; see ``DeliveryHandle/cancel()``.
    public func cancel() { base.cancel() }

    /// Finishes the handle; see ``DeliveryHandle/finish()``.
    public func finish() { base.finish() }

    /// Finishes the handle and calls `completion` once it ended; see
    /// ``DeliveryHandle/finish(completion:)``.
    public func finish(completion: @escaping @Sendable () -> Void) { base.finish(completion: completion) }

    /// Finishes the handle and returns once it ended; see ``DeliveryHandle/finishAndWait()``.
    public func finishAndWait() async { await base.finishAndWait() }

    /// See ``DeliveryHandle/isCancelled``.
    public var isCancelled: Bool { base.isCancelled }

    /// See ``DeliveryHandle/isFinished``.
    public var isFinished: Bool { base.isFinished }

    /// See ``DeliveryHandle/statistics``.
    public var statistics: ReceptionistStatistics { base.statistics }
}
