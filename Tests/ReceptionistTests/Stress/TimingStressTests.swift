import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// `statistics.timing` read while producers send and a drain delivers (issue 34, item 4): the
    /// timing is written by the drain and by senders under the lock, and read by anyone, so under
    /// ThreadSanitizer this shows it races with nothing; every snapshot is consistent, and the
    /// deliveries are untouched by it.
    @Suite(.serialized, .tags(.stress))
    struct TimingStressTests {
        static let producers = 4

        @Test(arguments: [1, 256])
        func snapshotsTakenDuringDeliveryAreConsistent(drainBudget: Int) {
            let perProducer = scaled(50_000)
            let checker = OrderChecker()
            let queue = DispatchQueue(label: "TimingStressTests")
            let receptionist = Receptionist<Int>(on: queue, drainBudget: drainBudget) { checker.record($0) }
            let inconsistent = Locked<[String]>(uncounted: [])
            let snapshots = AtomicValue<Int>(0)
            let stop = AtomicValue<Bool>(false)
            let readerDone = DispatchSemaphore(value: 0)
            Thread {
                while !stop.load(ordering: .acquiring) {
                    let timing = receptionist.statistics.timing
                    snapshots.add(1, ordering: .relaxed)
                    var problems: [String] = []
                    if let last = timing.lastWait, let longest = timing.longestWait, last > longest {
                        problems.append("last wait \(last) > longest \(longest)")
                    }
                    if timing.lastWait != nil, timing.longestWait == nil {
                        problems.append("a last wait without a longest")
                    }
                    if let age = timing.oldestPendingAge, age < .zero { problems.append("negative age \(age)") }
                    if let block = timing.longestTaskBlock, block <= .zero { problems.append("task block \(block)") }
                    if !problems.isEmpty { inconsistent.withLock { $0 += problems } }
                }
                readerDone.signal()
            }.start()
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer { _ = receptionist.send(stamp(producer, sequence)) }
            }
            receptionist.finish()
            #expect(waitUntil { receptionist.isFinished })
            stop.store(true, ordering: .releasing)
            #expect(wait(readerDone))

            let total = Self.producers * perProducer
            #expect(checker.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            #expect(inconsistent.withLock { $0 }.isEmpty, "\(inconsistent.withLock { $0.prefix(5) })")
            #expect(snapshots.load(ordering: .relaxed) > 0)
            let timing = receptionist.statistics.timing
            #expect(timing.oldestPendingAge == nil, "nothing waits once finished")
            #expect(timing.lastWait != nil && timing.longestWait != nil && timing.longestDrain != nil)
            // Every segment ran to its end: each timed task block lies within its drain.
            if let block = timing.longestTaskBlock, let drain = timing.longestDrain {
                #expect(block <= drain)
            } else {
                Issue.record("no task block or drain timed: \(timing)")
            }
        }
    }
}
