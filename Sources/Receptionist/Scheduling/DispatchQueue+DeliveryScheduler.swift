import Dispatch

extension DispatchQueue: DeliveryScheduler {
    /// The current time of the uptime clock (`DispatchTime.now().uptimeNanoseconds`).
    ///
    /// The clock is monotonic (`mach_absolute_time` on Darwin, `CLOCK_MONOTONIC` on Linux), does
    /// not advance while the system is asleep, and is shared by every `DispatchQueue` and
    /// `OperationQueue`. Safe to read from any thread.
    public var now: SchedulerInstant { .uptimeNow }

    /// Runs `work` on this queue, with `asyncAfter(deadline:execute:)`, once the uptime clock
    /// reaches `deadline` (at once if it has passed).
    ///
    /// The work runs on the queue as any block submitted to it (on a serial queue, one at a
    /// time). Dispatch may coalesce timers, so do not rely on the order of work items whose
    /// deadlines are close together. Cancelling through the handle is
    /// checked when the timer fires, on the queue, so work cancelled before then never runs;
    /// the timer itself still fires (a no-op), and until then keeps the queue and the handle,
    /// but not the work, alive.
    @discardableResult
    public func submit(
        at deadline: SchedulerInstant,
        _ work: @escaping @Sendable () -> Void
    ) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        asyncAfter(deadline: deadline.dispatchTime) { scheduled.runIfPending() }
        return scheduled
    }
}
