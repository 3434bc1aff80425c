/// A delivery target that also has a clock and can run work at a deadline.
///
/// Time-based stages (throttle, debounce, batch-by-time) read ``now`` and schedule their timers
/// through this protocol, so tests can drive them with ``ManualScheduler`` instead of real time.
///
/// The library provides:
/// - ``QueueScheduler`` (`.on(queue)`): the uptime clock, with work run on any target (a
///   `DispatchQueue`, an `OperationQueue`, a ``DeliveryTarget`` of your own);
/// - ``ManualScheduler``, whose clock moves only when a test advances it.
///
/// These are the supported conformances: ``ScheduledWork`` handles are made by the library. To
/// run timers on a context of your own, make it a ``DeliveryTarget`` and pass `.on(target)`.
public protocol DeliveryScheduler: DeliveryTarget {
    /// The scheduler's current time.
    ///
    /// Safe to read from any thread. Instants of different schedulers are comparable only if
    /// they share a clock (`DispatchQueue` and `OperationQueue` do).
    var now: SchedulerInstant { get }

    /// Runs `work` on this scheduler's context once `deadline` is reached (at once if it has passed).
    ///
    /// May be called from any thread, also from inside work the scheduler is running. `work`
    /// runs exactly once unless cancelled through the returned handle, never before `deadline`
    /// by this scheduler's ``now``. Work items with different deadlines are not ordered relative to
    /// one another by this protocol; see each conformance.
    ///
    /// - Parameters:
    ///   - deadline: the instant, on this scheduler's clock, at which `work` becomes due.
    ///   - work: the work to run.
    /// - Returns: a handle that cancels the work if it has not started. Discarding the handle
    ///   does not cancel the work.
    @discardableResult
    func submit(at deadline: SchedulerInstant, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
}
