import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Real-time smoke tests of the `DispatchQueue` and `OperationQueue` schedulers.
///
/// Deadlines are short and the waits generous: a wait that times out is a failure guard, never
/// a timing assumption. "Not before the deadline" is checked with the scheduler's own clock.
@Suite struct DeliverySchedulerTests {
    /// What a work item saw when it ran.
    private struct Observation: Sendable, Equatable {
        let onExpectedContext: Bool
        let now: SchedulerInstant
    }

    /// Submits work 20 ms ahead and expects it to run once, on the scheduler's context, and not
    /// before the deadline by the scheduler's own clock.
    private func expectRunsOnItsContextAtTheDeadline(
        _ scheduler: some DeliveryScheduler,
        isOnContext: @escaping @Sendable () -> Bool
    ) {
        let seen = Recorder<Observation>()
        let done = DispatchSemaphore(value: 0)
        let deadline = scheduler.now + .milliseconds(20)
        scheduler.submit(at: deadline) {
            seen.append(Observation(onExpectedContext: isOnContext(), now: scheduler.now))
            done.signal()
        }
        #expect(wait(done, seconds: 10))
        let observation = seen.values.first
        #expect(seen.count == 1)
        #expect(observation?.onExpectedContext == true)
        #expect(observation.map { $0.now >= deadline } == true)
    }

    /// Cancels work before it can run and expects only a later sentinel to run; `hold` and
    /// `release` suspend and resume the scheduler's target, `settle` waits until everything
    /// submitted to the scheduler has run.
    private func expectCancelledWorkNotToRun(
        _ scheduler: some DeliveryScheduler,
        hold: () -> Void,
        release: () -> Void,
        settle: () -> Void
    ) {
        let recorder = Recorder<String>()
        let sentinelRan = DispatchSemaphore(value: 0)
        let start = scheduler.now
        // The target is held from submit to cancel: on a slow machine more than 10 ms can pass
        // in between, and the work must not have started before the cancel.
        hold()
        let cancelled = scheduler.submit(at: start + .milliseconds(10)) { recorder.append("cancelled") }
        cancelled.cancel()
        release()
        scheduler.submit(at: start + .milliseconds(30)) {
            recorder.append("sentinel")
            sentinelRan.signal()
        }
        #expect(wait(sentinelRan, seconds: 10))
        settle()
        #expect(recorder.values == ["sentinel"])
        #expect(cancelled.isCancelled)
    }

    // MARK: DispatchQueue

    @Test func dispatchQueueRunsWorkOnTheQueueAtTheDeadline() {
        let queue = DispatchQueue(label: "DeliverySchedulerTests.dispatch")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        expectRunsOnItsContextAtTheDeadline(.on(queue)) { DispatchQueue.getSpecific(key: key) == 42 }
    }

    @Test func dispatchQueueRunsAPastDeadlineAtOnce() {
        let queue = QueueScheduler(DispatchQueue(label: "DeliverySchedulerTests.dispatch.past"))
        let done = DispatchSemaphore(value: 0)
        queue.submit(at: .zero) { done.signal() }
        queue.submit(at: queue.now - .seconds(1)) { done.signal() }
        #expect(wait(done, seconds: 10))
        #expect(wait(done, seconds: 10))
    }

    @Test func dispatchQueueDoesNotRunCancelledWork() {
        let queue = DispatchQueue(label: "DeliverySchedulerTests.dispatch.cancel")
        expectCancelledWorkNotToRun(.on(queue), hold: queue.suspend, release: queue.resume) { drainQueue(queue) }
    }

    // MARK: Any target

    @Test func aQueueSchedulerRunsWorkOnATargetOfYourOwnAtTheDeadline() {
        let target = ThreadTarget()
        expectRunsOnItsContextAtTheDeadline(.on(target)) { ThreadTarget.isCurrent }
    }

    // MARK: OperationQueue

    @Test func operationQueueRunsWorkAsAnOperationAtTheDeadline() {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        expectRunsOnItsContextAtTheDeadline(.on(queue)) { OperationQueue.current === queue }
    }

    @Test func operationQueueRunsAPastDeadlineAtOnce() {
        let queue = QueueScheduler(OperationQueue())
        let done = DispatchSemaphore(value: 0)
        queue.submit(at: queue.now - .seconds(1)) { done.signal() }
        #expect(wait(done, seconds: 10))
    }

    @Test func operationQueueDoesNotRunCancelledWork() {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        expectCancelledWorkNotToRun(
            .on(queue),
            hold: { queue.isSuspended = true },
            release: { queue.isSuspended = false },
            settle: { queue.waitUntilAllOperationsAreFinished() }
        )
    }

    @Test func operationQueueHonoursCancelAfterTheOperationWasAdded() {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let recorder = Recorder<String>()
        let blockerStarted = DispatchSemaphore(value: 0)
        let releaseBlocker = DispatchSemaphore(value: 0)
        let sentinelRan = DispatchSemaphore(value: 0)

        // Occupy the queue so the scheduled operation is added but cannot start yet.
        queue.addOperation {
            blockerStarted.signal()
            _ = wait(releaseBlocker, seconds: 10)
        }
        #expect(wait(blockerStarted, seconds: 10))
        let scheduler = QueueScheduler(queue)
        let cancelled = scheduler.submit(at: scheduler.now) { recorder.append("cancelled") }
        // No event says the timer has added the operation: watch the queue (a failure guard).
        #expect(waitUntil(seconds: 10) { queue.operationCount == 2 })
        cancelled.cancel()
        scheduler.submit(at: scheduler.now) {
            recorder.append("sentinel")
            sentinelRan.signal()
        }
        releaseBlocker.signal()
        #expect(wait(sentinelRan, seconds: 10))
        queue.waitUntilAllOperationsAreFinished()
        #expect(recorder.values == ["sentinel"])
    }
}
