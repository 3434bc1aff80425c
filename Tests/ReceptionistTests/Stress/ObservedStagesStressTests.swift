import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// Observations with stages under 4 writers (issue 34, item 3): the writes feed the stages'
    /// intake themselves, under the model's lock, and whichever writer finds it idle runs the
    /// stages. Every change must still arrive once, in the order of the writes, with its chain.
    @Suite(.serialized, .tags(.stress))
    struct ObservedStagesStressTests {
        static let producers = StressTests.producers

        @Test func stagedObservationsOfOneModelGetEveryWriteOnceInOrder() {
            let perProducer = eventsPerThread(20_000)
            let total = Self.producers * perProducer
            let model = Counter()
            let order = OrderChecker()
            let chainBreaks = AtomicValue<Int>(0)
            let lastNew = Locked(uncounted: -1)
            let queue = DispatchQueue(label: "stage.stress.observed")
            // Two staged observations of one property: a lossless batch and a chain check.
            let batches = model.receptionist(for: \.value)
                .map { $0.newValue }
                .batch(count: 100, every: .milliseconds(5))
                .deliver(on: queue) { values in
                    for value in values { order.record(value) }
                }
            let chain = model.receptionist(for: \.value)
                .filter { _ in true }
                .deliver(on: .immediate) { change in
                    lastNew.withLock { last in
                        if change.oldValue != last { chainBreaks.add(1, ordering: .relaxed) }
                        last = change.newValue
                    }
                }
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer { model.value = stamp(producer, sequence) }
            }
            batches.finish()
            chain.finish()
            #expect(waitUntil(seconds: 120) { batches.isFinished && chain.isFinished })
            #expect(order.report == OrderChecker.Report(received: total))
            #expect(chainBreaks.load(ordering: .relaxed) == 0, "each old value is the previous new value")
            #expect(lastNew.withLock { $0 } == model.value, "the final value was delivered")
            #expect(chain.statistics.delivered == total, "\(chain.statistics)")
            #expect(chain.intakeStatistics?.pending == 0)
        }
    }
}
