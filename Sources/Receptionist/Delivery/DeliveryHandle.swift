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
    /// What producers are told now: ``Writability/writable``, ``Writability/paused`` (only a
    /// ``BufferPolicy/watermarks(low:high:)`` buffer pauses), or ``Writability/ended(_:)`` once
    /// the delivery no longer takes input. A snapshot: hear the changes with
    /// ``onWritabilityChange(on:_:)``. See <doc:ThreadingGuarantees#Flow-control>.
    var writability: Writability { get }
    /// Runs `resume` once on `target` with the state, as soon as producers may go on or the
    /// delivery ended: at once (submitted to `target`) unless producers are paused; otherwise at
    /// the next ``Writability/writable`` or ``Writability/ended(_:)``. Submitted after every lock
    /// of the library is released. Each block runs exactly once.
    func whenWritable(on target: some DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void)
    /// Calls `handler` on `target` with the current writability, then with every change of it, in
    /// order, never the same state twice in a row, until ``Writability/ended(_:)`` (its last
    /// call) or ``WritabilityListener/cancel()``. Submitted after every lock of the library is
    /// released; calls never overlap. The way for an event loop to pause and resume reading
    /// without registering a block per pause.
    @discardableResult
    func onWritabilityChange(
        on target: some DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener
}

extension DeliveryHandle {
    /// Whether producers may send without being told to pause: ``writability`` is
    /// ``Writability/writable`` (`false` while paused and once ended).
    public var isWritable: Bool { writability == .writable }

    /// Runs `resume` once on `target` as soon as producers may go on or the delivery ended, as
    /// ``whenWritable(on:_:)-(_,(Writability)->Void)`` does, for a block that does not need to
    /// tell the two apart (its producer's next send is refused after an end).
    public func whenWritable(on target: some DeliveryTarget, _ resume: @escaping @Sendable () -> Void) {
        whenWritable(on: target) { (_: Writability) in resume() }
    }

    /// Suspends until producers may go on (returns ``Writability/writable``) or the delivery
    /// ended (returns ``Writability/ended(_:)``); returns at once unless they are paused.
    ///
    /// Task cancellation ends the wait early, returning the state at that moment (which may still
    /// be ``Writability/paused``).
    public func untilWritable() async -> Writability {
        let waiting = OnceContinuation(current: { [self] in self.writability })
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Writability, Never>) in
                waiting.set(continuation)
                whenWritable(on: .immediate) { state in waiting.resume(state) }
            }
        } onCancel: {
            waiting.resume(nil)
        }
    }

    /// The changes of ``writability`` as an asynchronous sequence: the current state first, then
    /// each change, in order; the sequence ends after ``Writability/ended(_:)``, and ending the
    /// iteration (or cancelling its task) stops listening.
    public var writabilityChanges: AsyncStream<Writability> {
        AsyncStream { continuation in
            let listener = onWritabilityChange(on: .immediate) { state in
                continuation.yield(state)
                if state.isEnded { continuation.finish() }
            }
            continuation.onTermination = { _ in listener.cancel() }
        }
    }

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
