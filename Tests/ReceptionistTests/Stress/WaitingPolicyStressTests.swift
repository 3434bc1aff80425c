import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// `.waiting(capacity:)` under load: producers blocked on a full buffer while the consumer
    /// drains, and while cancel or finish race them.
    @Suite(.serialized, .tags(.stress))
    struct WaitingPolicyStressTests {
        static let producers = 4

        @Test(arguments: [StressTests.TargetKind.serialQueue, .concurrentQueue, .operationQueue, .immediate])
        func blockedProducersLoseNothingAndTheBufferStaysBounded(kind: StressTests.TargetKind) {
            let perProducer = eventsPerThread(100_000)
            let checker = OrderChecker()
            let receptionist = Receptionist<Int>(on: kind.make(), buffering: .waiting(capacity: 64)) { value in
                checker.record(value)
            }
            let refused = AtomicValue<Int>(0)
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer where !receptionist.send(stamp(producer, sequence)) {
                    refused.add(1, ordering: .relaxed)
                }
            }
            receptionist.finish()
            #expect(waitUntil { receptionist.isFinished })
            let total = Self.producers * perProducer
            #expect(refused.load(ordering: .relaxed) == 0)
            #expect(checker.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            let statistics = receptionist.statistics
            #expect(statistics.maxPending <= 64, "memory stays at the capacity")
            #expect(statistics.delivered == total && statistics.dropped == 0)
            if kind != .immediate { #expect(statistics.waits > 0, "producers outpaced the consumer and waited") }
        }

        @Test(arguments: 0..<8)
        func nobodyStaysBlockedAfterCancelOrFinishReturns(seed: Int) {
            var random = SplitMix64(seed: UInt64(seed))
            let cancels = Bool.random(using: &random)
            let stopAfter = Int.random(in: 1..<5_000, using: &random)
            let queue = DispatchQueue(label: "stress.waiting.stop")
            let delivered = AtomicValue<Int>(0)
            let receptionist = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 8)) { _ in
                // A slow consumer keeps the producers blocked most of the time.
                if delivered.add(1, ordering: .relaxed).newValue % 64 == 0 { usleep(50) }
            }
            let accepted = AtomicValue<Int>(0)
            let returnedAfterStop = AtomicValue<Int>(0)
            let stopped = AtomicValue<Bool>(false)
            onThreads(Self.producers + 1) { thread in
                guard thread < Self.producers else {
                    while delivered.load(ordering: .relaxed) < stopAfter { usleep(10) }
                    if cancels { receptionist.cancel() } else { receptionist.finish() }
                    stopped.store(true, ordering: .releasing)
                    return
                }
                var sequence = 0
                while receptionist.send(stamp(thread, sequence)) {
                    accepted.add(1, ordering: .relaxed)
                    sequence += 1
                }
                // Rejected: the receptionist stopped; every producer gets here, none stays blocked.
                returnedAfterStop.add(1, ordering: .relaxed)
            }
            let didStop = stopped.load(ordering: .acquiring)
            #expect(didStop)
            #expect(returnedAfterStop.load(ordering: .relaxed) == Self.producers, "every blocked producer returned")
            #expect(waitUntil { receptionist.isFinished || receptionist.statistics.inFlight == 0 })
            drainQueue(queue)
            let statistics = receptionist.statistics
            #expect(statistics.received == accepted.load(ordering: .relaxed))
            if cancels {
                #expect(statistics.delivered + statistics.discarded == statistics.received)
            } else {
                #expect(receptionist.isFinished)
                #expect(statistics.delivered == statistics.received, "finish delivered everything accepted")
            }
            #expect(statistics.maxPending <= 8)
        }
    }
}
