import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// Every state of the drain loop under load, with a cancel landing at a random moment: sends
    /// that claim an idle inline receptionist (`.claimed`), drains holding a taken segment
    /// (`.delivering`), drains taking the next one (`.takingNext`), with and without senders
    /// waiting for room.
    @Suite(.serialized, .tags(.stress))
    struct DrainLoopStressTests {
        static let producers = 3

        enum Setup: String, CaseIterable, CustomTestStringConvertible {
            /// Claimed drains on the senders' threads, budget 16.
            case immediate
            /// As `immediate`, with senders waiting for room (claims through `attempt`).
            case immediateWaiting
            /// Drains on a serial queue, budget 16 (segments split, drains resubmitted).
            case serialQueue
            /// As `serialQueue`, with senders waiting for room.
            case serialQueueWaiting

            var testDescription: String { rawValue }

            var target: any DeliveryTarget {
                switch self {
                case .immediate, .immediateWaiting: ImmediateTarget()
                case .serialQueue, .serialQueueWaiting: DispatchQueue(label: "stress.drain-loop")
                }
            }

            var policy: BufferPolicy {
                switch self {
                case .immediate, .serialQueue: .unbounded
                case .immediateWaiting, .serialQueueWaiting: .waiting(capacity: 8)
                }
            }
        }

        /// Whatever the moment of the cancel: each accepted event is delivered at most once, in
        /// its producer's order, or discarded and counted; none is lost or in flight at the end;
        /// at most one task block starts after `cancel()` returned (the one a drain had committed
        /// to); and the task block is released.
        @Test(arguments: Setup.allCases, 0..<4)
        func aCancelAtAnyMomentLosesNothingAndDuplicatesNothing(setup: Setup, seed: Int) {
            let perProducer = eventsPerThread(20_000, threads: Self.producers)
            let checker = OrderChecker()
            let cancelReturned = AtomicValue<Bool>(false)
            let startedAfterCancel = AtomicValue<Int>(0)
            let running = AtomicValue<Int>(0)
            let overlaps = AtomicValue<Int>(0)
            let lifetimes = LifetimeCounter()
            let witness = LifetimeWitness(lifetimes)
            let receptionist = Receptionist<Int>(
                on: setup.target, buffering: setup.policy, drainBudget: 16
            ) { [witness] value in
                if cancelReturned.load(ordering: .acquiring) { startedAfterCancel.add(1, ordering: .relaxed) }
                if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                witness.touch()
                checker.record(value)
                running.subtract(1, ordering: .acquiringAndReleasing)
            }
            _ = consume witness
            let accepted = AtomicValue<Int>(0)
            var random = SplitMix64(seed: UInt64(seed) &* 7919 &+ 17)
            // Somewhere in the first half of the run, in sends of the first producer.
            let cancelAt = Int.random(in: 0..<max(1, perProducer / 2), using: &random)
            let cancelNow = AtomicValue<Bool>(false)
            onThreads(Self.producers + 1) { thread in
                guard thread < Self.producers else {
                    // The canceller: spins until the first producer passed `cancelAt`.
                    while !cancelNow.load(ordering: .acquiring) {}
                    receptionist.cancel()
                    cancelReturned.store(true, ordering: .releasing)
                    return
                }
                var sent = 0
                for sequence in 0..<perProducer {
                    if thread == 0 && sequence == cancelAt { cancelNow.store(true, ordering: .releasing) }
                    guard receptionist.send(stamp(thread, sequence)).isAccepted else { break }
                    sent += 1
                }
                if thread == 0 && cancelAt >= sent { cancelNow.store(true, ordering: .releasing) }
                accepted.add(sent, ordering: .relaxed)
            }
            // A queue's drain may still be running its last task block.
            #expect(waitUntil { receptionist.statistics.inFlight == 0 })

            #expect(receptionist.isCancelled)
            let report = checker.report
            #expect(report.duplicatedOrReordered == 0 && report.gaps == 0, "\(report)")
            let stats = receptionist.statistics
            let acceptedTotal = accepted.load(ordering: .relaxed)
            #expect(stats.received == acceptedTotal, "every accepted send counted once")
            #expect(stats.delivered == report.received, "the count matches what the task block saw")
            #expect(stats.delivered + stats.discarded == acceptedTotal, "\(stats), accepted \(acceptedTotal)")
            #expect(stats.pending == 0 && stats.inFlight == 0)
            #expect(startedAfterCancel.load(ordering: .relaxed) <= 1)
            #expect(overlaps.load(ordering: .relaxed) == 0, "task blocks never overlapped")
            #expect(waitUntil { lifetimes.deinitialized == 1 }, "the task block was released")
        }
    }
}
