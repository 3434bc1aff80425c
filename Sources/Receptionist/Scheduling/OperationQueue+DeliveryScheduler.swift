import Dispatch
import Foundation

extension OperationQueue: DeliveryScheduler {
    /// The current time of the uptime clock (`DispatchTime.now().uptimeNanoseconds`), the same
    /// clock as `DispatchQueue`'s ``DeliveryScheduler/now``.
    ///
    /// Monotonic; does not advance while the system is asleep. Safe to read from any thread.
    public var now: SchedulerInstant { .uptimeNow }

    /// Adds an operation running `work` to this queue once the uptime clock reaches `deadline`
    /// (at once if it has passed).
    ///
    /// A timer on a global dispatch queue waits for the deadline and then adds the operation,
    /// so `work` runs as any operation of this queue: with its concurrency limit, quality of
    /// service and `OperationQueue.current`. The timers run concurrently, so do not rely on the
    /// order of work items whose deadlines are close together. Cancelling through the handle is
    /// honoured up to the moment the operation starts: work cancelled before then never runs.
    /// Suspending the queue delays the work past its deadline, as it delays every operation.
    @discardableResult
    public func submit(
        at deadline: SchedulerInstant,
        _ work: @escaping @Sendable () -> Void
    ) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        DispatchQueue.global().asyncAfter(deadline: deadline.dispatchTime) { [self] in
            guard !scheduled.isCancelled else { return }
            addOperation { scheduled.runIfPending() }
        }
        return scheduled
    }
}
