/// The retry protocol of every optimistic write of the library: ``ObservableValue/update(_:)``,
/// `$property.update`, and transactions (``ObservableModelProtocol/update(_:)``). One place, so
/// that its three rules are written once:
///
/// 1. **Validate, then apply, in one critical section.** `attempt` runs under the model's lock:
///    if a property the closure read has changed since (another version), the closure must run
///    again (``CommitAttempt/conflict(selfInflicted:)``); otherwise the writes are applied.
/// 2. **Observation is told first, outside the lock.** A written property that Observation may
///    be tracking (it has a notifier) and was not told yet makes the attempt stop before it
///    writes anything (``CommitAttempt/notifyFirst(_:)``): its `willSet` runs here, with no lock
///    held (it runs `onChange` handlers, which may read or write the model), the notifier joins
///    `notified` (owed a `didSet`, which the caller sends once the update ends, whatever the
///    retries), and the commit is tried again at once.
/// 3. **A conflict of the closure's own making stops the program.** A write by this very thread
///    since the read can only come from the closure itself (it wrote the model directly, so the
///    update could never commit), unless `willSet` just ran: then it came from an Observation
///    handler, a concurrent write like any other.
///
/// - Parameters:
///   - notified: the notifiers told so far (kept across runs of the closure).
///   - model: passed to `willSet`.
///   - misuse: the message for rule 3 (prefixed and printed in every build configuration by
///     ``invalidConfiguration(_:)``).
///   - attempt: one attempt, under the model's lock: given the notifiers told so far, it applies
///     the writes into `batch` (drains to submit, values to release after the lock) or says why
///     not.
/// - Returns: `true` once committed; `false` if the closure must run again.
@inlinable
func commitOptimistically(
    notified: inout [any ObservationNotifier],
    model: AnyObject,
    misuse: @autoclosure () -> String,
    attempt: (_ notified: [any ObservationNotifier], _ batch: inout WriteBatch) -> CommitAttempt
) -> Bool {
    var notifiedJustNow = false
    while true {
        var batch = WriteBatch()
        let outcome = attempt(notified, &batch)
        batch.submitDrains()
        switch outcome {
        case .committed:
            return true
        case .notifyFirst(let notifiers):
            notified += notifiers
            notifiedJustNow = true
            assertNoLockHeld("telling Observation of a write")
            for notifier in notifiers { notifier.willSet(model) }
        case .conflict(let selfInflicted):
            if selfInflicted && !notifiedJustNow { invalidConfiguration(misuse()) }
            return false
        }
    }
}

/// How one attempt to commit an optimistic write ended, decided under the model's lock (see
/// ``commitOptimistically(notified:model:misuse:attempt:)``).
@usableFromInline
enum CommitAttempt {
    /// The writes were applied.
    case committed
    /// Observation may be tracking these written properties and was not told yet.
    case notifyFirst([any ObservationNotifier])
    /// A property the closure read changed since; `selfInflicted`: the last write to it came
    /// from this very thread.
    case conflict(selfInflicted: Bool)
}
