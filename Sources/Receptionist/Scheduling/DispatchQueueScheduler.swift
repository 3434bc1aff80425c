import Dispatch

/// A `DispatchQueue` as a ``DeliveryScheduler``: the uptime clock, and timers with
/// `asyncAfter`. Pass it as the scheduler of a time-based stage:
///
/// ```swift
/// .throttle(for: .milliseconds(100), scheduler: .dispatchQueue(timerQueue), latest: true)
/// ```
///
/// A wrapper rather than members on `DispatchQueue` itself, so that the library adds no `now`
/// or `submit(at:)` to a system type (Combine's `Scheduler` gives `DispatchQueue` a `now` on
/// Apple platforms).
public struct DispatchQueueScheduler: DeliveryScheduler {
    /// The queue work runs on.
    public let queue: DispatchQueue

    /// A scheduler running its work on `queue`.
    public init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    /// The default scheduler of time-based stages: a serial queue of the library's own, on
    /// which timers fire (and the stages after a timer's stage run, when it fires).
    @usableFromInline
    static let stageTimers = DispatchQueueScheduler(DispatchQueue(label: "Receptionist.stageTimers", qos: .userInitiated))

    /// Submits `work` with `async(execute:)`.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// The current time of the uptime clock (`DispatchTime.now().uptimeNanoseconds`).
    ///
    /// The clock is monotonic (`mach_absolute_time` on Darwin, `CLOCK_MONOTONIC` on Linux), does
    /// not advance while the system is asleep, and is shared with ``OperationQueueScheduler``.
    /// Safe to read from any thread.
    public var now: SchedulerInstant { .uptimeNow }

    /// Runs `work` on the queue, with `asyncAfter(deadline:execute:)`, once the uptime clock
    /// reaches `deadline` (at once if it has passed).
    ///
    /// The work runs on the queue as any block submitted to it (on a serial queue, one at a
    /// time). Dispatch may coalesce timers, so do not rely on the order of work items whose
    /// deadlines are close together. Cancelling through the handle is checked when the timer
    /// fires, on the queue, so work cancelled before then never runs; the timer itself still
    /// fires (a no-op), and until then keeps the queue and the handle, but not the work, alive.
    @discardableResult
    public func submit(at deadline: SchedulerInstant, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        queue.asyncAfter(deadline: deadline.dispatchTime) { scheduled.run() }
        return scheduled
    }
}

extension DeliveryScheduler where Self == DispatchQueueScheduler {
    /// A scheduler running its work on `queue`: `scheduler: .dispatchQueue(queue)`.
    public static func dispatchQueue(_ queue: DispatchQueue) -> DispatchQueueScheduler {
        DispatchQueueScheduler(queue)
    }
}
