import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// A pipeline consumed with `for await` while 4 threads send: order per producer, exactly once,
    /// buffer policies and cancellation under load.
    @Suite(.serialized, .tags(.stress))
    struct PipelineValuesStressTests {
        static let producers = 4

        /// Sends `perProducer` stamped events from each of 4 threads, off the cooperative pool, then
        /// calls `done`.
        static func produce(
            _ perProducer: Int,
            into receptionist: Receptionist<Int>,
            then done: @escaping @Sendable () -> Void
        ) {
            DispatchQueue.global().async {
                onThreads(producers) { producer in
                    for sequence in 0..<perProducer { receptionist.send(stamp(producer, sequence)) }
                }
                done()
            }
        }

        @Test(arguments: [false, true])
        func everyEventArrivesOnceInOrderPerProducer(withStages: Bool) async {
            let perProducer = eventsPerThread(50_000)
            let base = Receptionist.pipeline(of: Int.self)
            let (receptionist, values) = withStages ? base.filter { _ in true }.map { $0 }.values() : base.values()
            let checker = OrderChecker()
            let consumer = Task {
                for await value in values { checker.record(value) }
            }
            Self.produce(perProducer, into: receptionist) { receptionist.finish() }
            await consumer.value
            #expect(checker.report == OrderChecker.Report(received: Self.producers * perProducer))
            #expect(receptionist.isFinished)
        }

        @Test func aBoundedBufferDropsOnlyAsItSays() async {
            let perProducer = eventsPerThread(50_000)
            let (receptionist, values) = Receptionist.pipeline(of: Int.self).values(
                buffering: .dropOldest(capacity: 16))
            let checker = OrderChecker()
            let consumer = Task {
                var last: Int?
                for await value in values {
                    checker.record(value)
                    last = value
                }
                return last
            }
            Self.produce(perProducer, into: receptionist) { receptionist.finish() }
            let last = await consumer.value
            let report = checker.report
            let statistics = values.statistics
            #expect(report.duplicatedOrReordered == 0)
            #expect(statistics.delivered == report.received)
            #expect(statistics.delivered + statistics.dropped == Self.producers * perProducer)
            #expect(statistics.maxPending <= 16)
            // dropOldest never drops the newest event: the last one sent, some producer's last, arrives.
            #expect(last.map { $0 & 0xFFFF_FFFF } == perProducer - 1)
        }

        @Test func coalescedOutputsAccountForEveryEvent() async {
            let perProducer = eventsPerThread(50_000)
            let (receptionist, values) = Receptionist.pipeline(of: Int.self).coalesce().values()
            let counted = Locked(uncounted: 0)
            let checker = OrderChecker()
            let consumer = Task {
                for await output in values {
                    counted.withLock { $0 += output.count }
                    checker.record(output.latest)
                }
            }
            Self.produce(perProducer, into: receptionist) { receptionist.finish() }
            await consumer.value
            #expect(counted.withLock { $0 } == Self.producers * perProducer)
            #expect(checker.report.duplicatedOrReordered == 0)
            #expect(values.statistics.maxPending <= 1)
        }

        @Test func cancellingTheConsumerWhileProducersSendCancelsTheReceptionist() async {
            let lifetimes = LifetimeCounter()
            let witness = LifetimeWitness(lifetimes)
            let (receptionist, values) = Receptionist.pipeline(of: Int.self)
                .filter { [witness] _ in
                    witness.touch()
                    return true
                }
                .values()
            _ = consume witness
            let checker = OrderChecker()
            let consumer = Task {
                for await value in values { checker.record(value) }
            }
            let produced = AtomicValue<Bool>(false)
            Self.produce(eventsPerThread(50_000), into: receptionist) { produced.store(true, ordering: .releasing) }
            let started = await waitUntilAsync(seconds: 240) {
                checker.report.received >= 1_000 || produced.load(ordering: .acquiring)
            }
            #expect(started)
            consumer.cancel()
            await consumer.value
            #expect(receptionist.isCancelled)
            #expect(!receptionist.send(0).isAccepted)
            #expect(checker.report.duplicatedOrReordered == 0)
            #expect(await waitUntilAsync(seconds: 240) { produced.load(ordering: .acquiring) })
            // Released once no producer thread is inside the stages any more.
            #expect(await waitUntilAsync(seconds: 240) { lifetimes.deinitialized == 1 })
        }
    }
}
