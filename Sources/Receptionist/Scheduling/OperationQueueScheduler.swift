import Dispatch
import Foundation

/// An `OperationQueue` as a ``DeliveryScheduler``: the uptime clock, and timers that add an
/// operation to the queue at their deadline.
///
/// ```swift
/// .batch(count: 100, every: .milliseconds(50), scheduler: .operationQueue(queue))
/// ```
public struct OperationQueueScheduler: DeliveryScheduler {
    /// The queue work runs on.
    public let queue: OperationQueue

    /// A scheduler running its work on `queue`.
    public init(_ queue: OperationQueue) {
        self.queue = queue
    }

    /// Submits `work` with `addOperation(_:)`.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        queue.addOperation(work)
    }

    /// The current time of the uptime clock (`DispatchTime.now().uptimeNanoseconds`), the same
    /// clock as ``DispatchQueueScheduler``'s.
    ///
    /// Monotonic; does not advance while the system is asleep. Safe to read from any thread.
    public var now: SchedulerInstant { .uptimeNow }

    /// Adds an operation running `work` to the queue once the uptime clock reaches `deadline`
    /// (at once if it has passed).
    ///
    /// A timer on a global dispatch queue waits for the deadline and then adds the operation,
    /// so `work` runs as any operation of the queue: with its concurrency limit, quality of
    /// service and `OperationQueue.current`. The timers run concurrently, so do not rely on the
    /// order of work items whose deadlines are close together. Cancelling through the handle is
    /// honoured up to the moment the operation starts: work cancelled before then never runs.
    /// Suspending the queue delays the work past its deadline, as it delays every operation.
    @discardableResult
    public func submit(at deadline: SchedulerInstant, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        let queue = queue
        DispatchQueue.global().asyncAfter(deadline: deadline.dispatchTime) {
            guard !scheduled.isCancelled else { return }
            queue.addOperation { scheduled.run() }
        }
        return scheduled
    }
}

extension DeliveryScheduler where Self == OperationQueueScheduler {
    /// A scheduler running its work as operations of `queue`: `scheduler: .operationQueue(queue)`.
    public static func operationQueue(_ queue: OperationQueue) -> OperationQueueScheduler {
        OperationQueueScheduler(queue)
    }
}
