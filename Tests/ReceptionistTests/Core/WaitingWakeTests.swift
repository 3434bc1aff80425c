import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// A waiting task woken for room whose cancellation lands before it runs again (issue 27, item
/// 6a): it returns `false` without sending, and no other waiter is left blocked by it, because a
/// drain wakes every waiting sender at once (`ReceptionistStateMachine.waitersToWake`).
@Suite struct WaitingWakeTests {
    /// The exact interleaving, made deterministic: the tasks run on an executor that runs their
    /// jobs only when told, so task A is woken by the drain, then cancelled, and only then resumes.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test func aTaskCancelledAfterItsWakeReturnsFalseAndTheOtherWaitersStillSend() async {
        let target = ManualTarget()
        let executor = ManualTaskExecutor()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target, buffering: .waiting(capacity: 1)) { seen.append($0) }
        let machine = WaitingMachineProbe(receptionist)
        #expect(receptionist.send(0).isAccepted, "fills the buffer")
        let taskA = Task(executorPreference: executor) { await receptionist.sendSuspending(1) }
        let taskB = Task(executorPreference: executor) { await receptionist.sendSuspending(2) }
        let threadResult = Recorder<Bool>()

        // Driven from a thread of its own: the tasks' jobs run there, when it says so.
        let observed = await onOwnThread { () -> Observed in
            var observed = Observed()
            executor.runAll()  // A and B run until they wait for room
            observed.waitingTasks = machine.waiterCount
            Thread { threadResult.append(receptionist.send(3).isAccepted) }.start()
            observed.threadWaited = waitUntil(seconds: 30) { machine.waiterCount == 3 }

            // The drain delivers 0, empties the buffer and wakes all three; A is cancelled before
            // it runs again, so its cancellation handler finds nothing to take out.
            target.runNext()
            observed.waitingAfterWake = machine.waiterCount
            taskA.cancel()

            // Both sides run until every sender returned. At every step, a sender still waiting
            // has a drain scheduled to wake it: nobody waits with nothing left to make room.
            var stranded = 0
            observed.settled = waitUntil(seconds: 30) {
                if machine.hasWaiterWithoutDrain { stranded += 1 }
                executor.runAll()
                target.runAll()
                return threadResult.count == 1 && machine.waiterCount == 0 && executor.isIdle
                    && target.pendingCount == 0 && seen.count == 3
            }
            observed.stranded = stranded
            return observed
        }
        #expect(observed.waitingTasks == 2, "A and B waited")
        #expect(observed.threadWaited, "a thread waited too")
        #expect(observed.waitingAfterWake == 0, "one wake-up for every waiter, not one per free slot")
        #expect(observed.settled, "every sender returned and everything sent was delivered")
        #expect(observed.stranded == 0)
        #expect(await taskA.value == .refused(.taskCancelled), "woken, then cancelled: not sent")
        #expect(await taskB.value == .accepted, "woken with A: sent although A passed nothing on")
        #expect(threadResult.values == [true], "woken with A: sent")
        #expect(seen.values.first == 0 && Set(seen.values) == [0, 2, 3], "1 never sent, the rest once each")
        let statistics = receptionist.statistics
        #expect(statistics.received == 3 && statistics.delivered == 3 && statistics.dropped == 0)
    }

    /// What the driving thread saw.
    struct Observed: Sendable {
        var waitingTasks = 0
        var threadWaited = false
        var waitingAfterWake = -1
        var settled = false
        var stranded = 0
    }
}

/// Reads a receptionist's state machine under its lock: how many senders wait for room, and
/// whether one waits while no drain is scheduled (nothing would ever wake it).
struct WaitingMachineProbe: Sendable {
    private let core: ReceptionistCore<Int>

    init(_ receptionist: Receptionist<Int>) {
        guard let core = receptionist.directCore else {
            preconditionFailure("WaitingMachineProbe: a receptionist without stages")
        }
        self.core = core
    }

    var waiterCount: Int { core.state.withLock { $0.waiters.count } }

    /// Checked in one critical section, so never a transient: a sender waits only on a full
    /// buffer, which has a drain scheduled, and the drain's last step takes every waiter.
    var hasWaiterWithoutDrain: Bool { core.state.withLock { !$0.waiters.isEmpty && !$0.isDrainScheduled } }
}

/// A task executor that runs the jobs enqueued on it only when the test says so, on the test's
/// thread: a task that prefers it resumes exactly when the test chooses.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ManualTaskExecutor: TaskExecutor {
    private let jobs = Locked<[UnownedJob]>(uncounted: [])

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
    }

    /// Whether no job waits to run.
    var isIdle: Bool { jobs.withLock { $0.isEmpty } }

    /// Runs the enqueued jobs, and those they enqueue, until none is left.
    @discardableResult
    func runAll() -> Int {
        var count = 0
        while let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
            count += 1
        }
        return count
    }
}
