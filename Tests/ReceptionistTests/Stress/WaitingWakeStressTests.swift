import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// Waiting senders, threads in `send` and tasks in `sendSuspending`, on a full receptionist
    /// whose consumer the test runs one task block at a time, while tasks are cancelled at random
    /// moments around the wake-ups (issue 27, item 6a).
    @Suite(.serialized, .tags(.stress))
    struct WaitingWakeStressTests {
        static let capacity = 4
        static let threads = 3
        static let tasks = 24
        /// The tasks the canceller may cancel; the others never are.
        static let cancellable = 16

        /// What one sending task saw.
        struct TaskOutcome: Sendable {
            /// How many of its sends were accepted: a prefix of its sequence (it stops at the
            /// first refusal).
            var accepted = 0
            /// Whether a send returned `false` while the task was not cancelled.
            var refusedUncancelled = false
        }

        @Test(arguments: 0..<8)
        func cancellationsAroundTheWakeStrandNoWaiterAndLoseNothing(seed: Int) async {
            let perThread = scaled(400)
            let perTask = scaled(40)
            let target = ManualTarget()
            let checker = OrderChecker()
            // Even seeds: one task block per step, so the buffer drains to its low-water mark
            // and refills over and over. Odd seeds: a step drains the whole buffer, so every
            // waiter is woken by the step that stops the drain.
            let budget = seed.isMultiple(of: 2) ? 1 : 256
            let receptionist = Receptionist<Int>(
                on: target, buffering: .waiting(capacity: Self.capacity), drainBudget: budget
            ) { checker.record($0) }
            let machine = WaitingMachineProbe(receptionist)
            let finished = Tally()

            let senders = (0..<Self.tasks).map { index in
                Task {
                    var outcome = TaskOutcome()
                    for sequence in 0..<perTask {
                        if await receptionist.sendSuspending(stamp(Self.threads + index, sequence)).isAccepted {
                            outcome.accepted += 1
                        } else {
                            outcome.refusedUncancelled = !Task.isCancelled
                            break
                        }
                    }
                    finished.increment()
                    return outcome
                }
            }
            let threadRefusals = AtomicValue<Int>(0)
            for thread in 0..<Self.threads {
                Thread {
                    for sequence in 0..<perThread where !receptionist.send(stamp(thread, sequence)).isAccepted {
                        threadRefusals.add(1, ordering: .relaxed)
                    }
                    finished.increment()
                }.start()
            }

            // The canceller cancels one of the first `cancellable` tasks at random each time the
            // consumer is about to run a task block (after a random spin, so that it lands before,
            // during or after the wake-up).
            let cancelled = Locked<Set<Int>>(uncounted: [])
            let go = DispatchSemaphore(value: 0)
            // Signalled after each cancel; the consumer waits for the first, so that every run
            // cancels at least one task however few steps it takes (a small scale under
            // ThreadSanitizer can finish before a canceller that is only signalled gets going).
            let landed = DispatchSemaphore(value: 0)
            let stop = AtomicValue<Bool>(false)
            let cancellerDone = DispatchSemaphore(value: 0)
            Thread {
                var random = SplitMix64(seed: UInt64(seed) &+ 1)
                let spin = AtomicValue<Int>(0)
                while true {
                    go.wait()
                    if stop.load(ordering: .acquiring) { break }
                    for _ in 0..<Int.random(in: 0..<4_000, using: &random) { spin.add(1, ordering: .relaxed) }
                    let victim = Int.random(in: 0..<Self.cancellable, using: &random)
                    senders[victim].cancel()
                    cancelled.withLock { _ = $0.insert(victim) }
                    landed.signal()
                }
                cancellerDone.signal()
            }.start()

            // The consumer, in steps: one drain each.
            let everyone = Self.tasks + Self.threads
            let (waitedFirst, stranded, settled) = await onOwnThread { () -> (Bool, Int, Bool) in
                var random = SplitMix64(seed: UInt64(seed))
                var stranded = 0
                var first = true
                // Nothing runs a task block before the first step, so the buffer fills and senders
                // wait on it, however the threads are scheduled (issue 41, item 4).
                let waitedFirst = waitUntil { receptionist.statistics.waits > 0 }
                let settled = waitUntil(seconds: 120) {
                    if first {
                        // The first cancel lands while senders wait on the full buffer.
                        first = false
                        go.signal()
                        _ = landed.wait(timeout: .now() + 60)
                    } else if Int.random(in: 0..<3, using: &random) == 0 {
                        go.signal()
                    }
                    let ran = target.runNext()
                    // Right after a step, before the senders it woke get going: a sender left
                    // waiting with no drain scheduled would stay blocked.
                    if machine.hasWaiterWithoutDrain { stranded += 1 }
                    if !ran { usleep(20) }  // nothing scheduled: senders are between sends
                    return finished.count == everyone
                }
                return (waitedFirst, stranded, settled)
            }
            stop.store(true, ordering: .releasing)
            go.signal()
            #expect(wait(cancellerDone))
            target.runAll()

            #expect(waitedFirst, "senders waited on the full buffer before the consumer's first step")
            #expect(settled, "every sender returned: none stayed blocked")
            #expect(stranded == 0, "a sender waited while no drain was scheduled to wake it")
            var outcomes: [TaskOutcome] = []
            for sender in senders { outcomes.append(await sender.value) }
            let cancelledTasks = cancelled.withLock { $0 }
            #expect(threadRefusals.load(ordering: .relaxed) == 0, "a thread's send is never refused here")
            #expect(!outcomes.contains { $0.refusedUncancelled }, "only a cancelled task's send returns false")
            for (index, outcome) in outcomes.enumerated() where !cancelledTasks.contains(index) {
                #expect(outcome.accepted == perTask, "task \(index), never cancelled, sent everything")
            }
            let accepted = Self.threads * perThread + outcomes.map(\.accepted).reduce(0, +)
            #expect(checker.report == OrderChecker.Report(received: accepted, duplicatedOrReordered: 0, gaps: 0))
            let statistics = receptionist.statistics
            #expect(statistics.received == accepted && statistics.delivered == accepted)
            #expect(statistics.maxPending <= Self.capacity)
            #expect(!cancelledTasks.isEmpty && cancelledTasks.allSatisfy { $0 < Self.cancellable })
        }
    }
}

/// A count that tasks and threads add to.
private final class Tally: Sendable {
    private let value = AtomicValue<Int>(0)

    func increment() { value.add(1, ordering: .releasing) }
    var count: Int { value.load(ordering: .acquiring) }
}
