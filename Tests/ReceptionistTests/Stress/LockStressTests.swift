import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// The library's lock (`Locked`), whichever implementation this build selected (futex,
    /// portable, adaptive, `Mutex`): mutual exclusion and the publication of what a critical
    /// section wrote, with more threads than cores, short and long critical sections, and work
    /// between them. Run under ThreadSanitizer by CI for every implementation. A lost wake-up
    /// fails the test that lost it (``onThreads(_:seconds:caller:sourceLocation:_:)``'s watchdog),
    /// instead of hanging the run.
    @Suite(.serialized, .tags(.stress))
    struct LockStressTests {
        /// State two fields of which must always agree: a critical section that overlapped
        /// another would see them apart.
        struct Pair {
            var first = 0
            var second = 0
            var log: [Int] = []
        }

        @Test(arguments: [2, 16, 64])
        func criticalSectionsNeverOverlapAndEveryIncrementIsKept(threads: Int) {
            let perThread = eventsPerThread(120_000 / threads, threads: threads)
            let locked = Locked(Pair())
            let torn = AtomicValue<Int>(0)
            onThreads(threads) { index in
                var random = SplitMix64(seed: UInt64(index))
                for sequence in 1...perThread {
                    locked.withLock { pair in
                        if pair.first != pair.second { torn.add(1, ordering: .relaxed) }
                        pair.first += 1
                        // Sometimes a longer critical section, so that waiters queue up and
                        // sleep, not only spin.
                        if sequence & 1023 == 0 { pair.log.append(index) }
                        pair.second += 1
                    }
                    // Work between acquisitions, sometimes none (back-to-back relocking).
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        var spin = 0
                        for _ in 0..<Int.random(in: 0..<200, using: &random) { spin &+= 1 }
                        if spin < 0 { print(spin) }
                    }
                }
            }
            let (first, second, logged) = locked.withLock { ($0.first, $0.second, $0.log.count) }
            #expect(torn.load(ordering: .relaxed) == 0, "a critical section saw another half done")
            #expect(first == threads * perThread)
            #expect(second == threads * perThread)
            #expect(logged == threads * (perThread / 1024))
        }

        /// A value written under the lock by one thread is seen whole by the next thread that
        /// takes it (the lock publishes it), including a heap-allocated one.
        @Test func aValueWrittenUnderTheLockIsSeenWholeByTheNextHolder() {
            let rounds = scaled(20_000)
            let locked = Locked<[Int]?>(nil)
            let wrong = AtomicValue<Int>(0)
            onThreads(8) { index in
                for round in 0..<rounds {
                    locked.withLock { slot in
                        if let array = slot {
                            // Every element of the array the previous holder made is its value.
                            if array.count != 16 || array.contains(where: { $0 != array[0] }) {
                                wrong.add(1, ordering: .relaxed)
                            }
                        }
                        slot = Array(repeating: index << 20 | round, count: 16)
                    }
                }
            }
            #expect(wrong.load(ordering: .relaxed) == 0)
        }

        /// The watchdog itself: a thread that never finishes (as one that lost its wake-up would
        /// not) fails the test, named, and the test goes on.
        @Test func aThreadThatNeverFinishesFailsTheTestInsteadOfHangingIt() {
            let release = DispatchSemaphore(value: 0)
            withKnownIssue {
                onThreads(2, seconds: 0.2) { index in
                    if index == 0 { release.wait() }
                }
            } matching: { issue in
                issue.comments.contains {
                    $0.rawValue.contains("aThreadThatNeverFinishesFailsTheTestInsteadOfHangingIt()")
                        // Thread 1 returns at once, but a loaded machine may not run it within
                        // the 0.2 s: then both count as unfinished.
                        && ($0.rawValue.contains("1 of 2 threads did not finish")
                            || $0.rawValue.contains("2 of 2 threads did not finish"))
                }
            }
            release.signal()  // lets the blocked thread end
        }
    }
}
