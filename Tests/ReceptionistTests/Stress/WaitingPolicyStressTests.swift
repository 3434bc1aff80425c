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
            // The first task block holds the target until a producer has waited on the full
            // buffer, so that every run makes producers wait, however the threads are scheduled.
            // (`.immediate` runs task blocks on the producers themselves: nothing to hold.)
            let holdsFirstBlock = AtomicValue<Bool>(kind != .immediate)
            let waitsSoFar = Locked<(@Sendable () -> Int)?>(uncounted: nil)
            let receptionist = Receptionist<Int>(on: kind.make(), buffering: .waiting(capacity: 64)) { value in
                if holdsFirstBlock.exchange(false, ordering: .relaxed) {
                    let waits = waitsSoFar.withLock { $0 }
                    #expect(waitUntil { (waits?() ?? 0) > 0 }, "a producer waited while the first task block ran")
                }
                checker.record(value)
            }
            waitsSoFar.withLock { $0 = { [weak receptionist] in receptionist?.statistics.waits ?? 0 } }
            let refused = AtomicValue<Int>(0)
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer where !receptionist.send(stamp(producer, sequence)).isAccepted {
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
            if kind != .immediate { #expect(statistics.waits > 0, "producers waited on the full buffer") }
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
                while receptionist.send(stamp(thread, sequence)).isAccepted {
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

        /// Where the stages sit in the staged stress tests' pipelines.
        enum StagedKind: String, CaseIterable, CustomTestStringConvertible {
            case mapToSerialQueue, batchToSerialQueue, mapToActor, mapToImmediate
            var testDescription: String { rawValue }
        }

        actor Sink {
            let checker = OrderChecker()
            nonisolated func record(_ value: Int) { checker.record(value) }
        }

        /// Four producers × 10⁵ into a staged waiting pipeline with a slow spot in the consumer:
        /// nothing lost or duplicated, order per producer kept, both ends of the pipeline within
        /// the capacity, and the producers waited (at the intake) rather than growing it.
        ///
        /// The first task block holds the target until a producer waited at the intake, so that
        /// every run makes producers wait, however the threads are scheduled (issue 41, item 4).
        /// (`mapToImmediate` runs its task blocks on the stage queue, which every pipeline shares:
        /// not a queue to hold.)
        @Test(arguments: StagedKind.allCases)
        func stagedProducersLoseNothingAndBothEndsStayBounded(kind: StagedKind) {
            let perProducer = eventsPerThread(100_000)
            let total = Self.producers * perProducer
            let capacity = 64
            let checker = OrderChecker()
            let delivered = AtomicValue<Int>(0)
            let holdsFirstBlock = AtomicValue<Bool>(kind != .mapToImmediate)
            let intakeWaitsSoFar = Locked<(@Sendable () -> Int)?>(uncounted: nil)
            let slowly: @Sendable (Int) -> Void = { value in
                if holdsFirstBlock.exchange(false, ordering: .relaxed) {
                    let waits = intakeWaitsSoFar.withLock { $0 }
                    #expect(waitUntil { (waits?() ?? 0) > 0 }, "a producer waited while the first task block ran")
                }
                checker.record(value)
                if delivered.add(1, ordering: .relaxed).newValue % 4_096 == 0 { usleep(200) }
            }
            let policy = BufferPolicy.waiting(capacity: capacity)
            let queue = DispatchQueue(label: "stress.waiting.staged")
            let sink = Sink()
            let receptionist: Receptionist<Int> =
                switch kind {
                case .mapToSerialQueue:
                    Receptionist.pipeline(of: Int.self).map { $0 }.deliver(on: queue, buffering: policy, slowly)
                case .batchToSerialQueue:
                    Receptionist.pipeline(of: Int.self).batch(count: 16)
                        .deliver(on: queue, buffering: policy) { batch in batch.forEach(slowly) }
                case .mapToActor:
                    Receptionist.pipeline(of: Int.self).map { $0 }
                        .deliver(on: sink, buffering: policy) { _, value in slowly(value) }
                case .mapToImmediate:
                    Receptionist.pipeline(of: Int.self).map { $0 }.deliver(on: .immediate, buffering: policy, slowly)
                }
            intakeWaitsSoFar.withLock {
                $0 = { [weak receptionist] in receptionist?.intakeStatistics?.waits ?? 0 }
            }
            let refused = AtomicValue<Int>(0)
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer where !receptionist.send(stamp(producer, sequence)).isAccepted {
                    refused.add(1, ordering: .relaxed)
                }
            }
            receptionist.finish()
            #expect(waitUntil { receptionist.isFinished })
            #expect(refused.load(ordering: .relaxed) == 0, "producer threads may always wait")
            #expect(checker.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            let statistics = receptionist.statistics
            let intake = receptionist.intakeStatistics!
            #expect(statistics.maxPending <= capacity, "outputs waiting for the task block")
            #expect(intake.maxPending <= capacity + 1, "inputs waiting for the stages (+ the finish)")
            #expect(statistics.dropped == 0)
            if kind != .mapToImmediate { #expect(intake.waits > 0, "the held consumer made the producers wait") }
        }

        /// Producers blocked at the intake and in the stages while cancel or finish races them:
        /// every one returns; after finish, everything accepted is delivered, after cancel no more.
        @Test(arguments: 0..<8)
        func nobodyStaysBlockedInAStagedPipelineAfterCancelOrFinish(seed: Int) {
            var random = SplitMix64(seed: UInt64(seed))
            let cancels = Bool.random(using: &random)
            let stopAfter = Int.random(in: 1..<5_000, using: &random)
            let queue = DispatchQueue(label: "stress.waiting.staged.stop")
            let delivered = AtomicValue<Int>(0)
            let receptionist = Receptionist.pipeline(of: Int.self)
                .map { $0 }
                .deliver(on: queue, buffering: .waiting(capacity: 8)) { _ in
                    if delivered.add(1, ordering: .relaxed).newValue % 64 == 0 { usleep(50) }
                }
            let accepted = AtomicValue<Int>(0)
            let returned = AtomicValue<Int>(0)
            onThreads(Self.producers + 1) { thread in
                guard thread < Self.producers else {
                    while delivered.load(ordering: .relaxed) < stopAfter { usleep(10) }
                    if cancels { receptionist.cancel() } else { receptionist.finish() }
                    return
                }
                var sequence = 0
                while receptionist.send(stamp(thread, sequence)).isAccepted {
                    accepted.add(1, ordering: .relaxed)
                    sequence += 1
                }
                returned.add(1, ordering: .relaxed)
            }
            #expect(returned.load(ordering: .relaxed) == Self.producers, "every blocked producer returned")
            #expect(waitUntil { receptionist.isFinished || receptionist.isCancelled })
            if !cancels {
                #expect(waitUntil { delivered.load(ordering: .relaxed) == accepted.load(ordering: .relaxed) })
                #expect(receptionist.statistics.dropped == 0, "finish delivered everything accepted")
            } else {
                drainQueue(queue)
                #expect(delivered.load(ordering: .relaxed) <= accepted.load(ordering: .relaxed))
            }
        }
    }
}
