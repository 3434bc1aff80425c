import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// `statistics.timing` read while producers send and a drain delivers (issue 34, item 4): the
    /// timing is written by the drain and by senders under the lock, and read by anyone, so under
    /// ThreadSanitizer this shows it races with nothing, and the deliveries are untouched by it.
    ///
    /// The figures are clamped (a wait, a task block or a drain to at least 1 ns, an age to at
    /// least zero), so checks that they are positive, or that the last wait is at most the
    /// longest, hold whatever the clock readings were. These checks fail on a wrong reading
    /// (issue 41, item 4): the first task block holds the target while the clock moves on by a
    /// span the test measures, and a change sent meanwhile waits behind it, so the task block,
    /// the wait and the age have lower bounds that a figure measured from the wrong end (negative,
    /// then clamped) falls short of; every snapshot lies within the receptionist's lifetime; and
    /// no longest figure shrinks from one snapshot to the next.
    @Suite(.serialized, .tags(.stress))
    struct TimingStressTests {
        static let producers = 4
        /// How long the first task block holds the target, at least.
        static let hold = Duration.milliseconds(2)

        @Test(arguments: [1, 256])
        func snapshotsTakenDuringDeliveryAreConsistent(drainBudget: Int) {
            let perProducer = scaled(50_000)
            let checker = OrderChecker()
            let queue = DispatchQueue(label: "TimingStressTests")
            let created = DispatchTime.now().uptimeNanoseconds  // before any stamp
            let firstBlockRuns = DispatchSemaphore(value: 0)
            let releaseFirstBlock = DispatchSemaphore(value: 0)
            let holdsFirstBlock = AtomicValue<Bool>(true)
            let receptionist = Receptionist<Int>(on: queue, drainBudget: drainBudget) { value in
                if holdsFirstBlock.exchange(false, ordering: .relaxed) {
                    firstBlockRuns.signal()
                    #expect(wait(releaseFirstBlock), "the test released the first task block")
                }
                checker.record(value)
            }
            let inconsistent = Locked<[String]>(uncounted: [])
            let snapshots = AtomicValue<Int>(0)
            let stop = AtomicValue<Bool>(false)
            let readerDone = DispatchSemaphore(value: 0)
            Thread {
                var previous = ReceptionistStatistics.Timing()
                while !stop.load(ordering: .acquiring) {
                    let timing = receptionist.statistics.timing
                    let problems = Self.problems(timing, after: previous, lifetime: elapsed(since: created))
                    snapshots.add(1, ordering: .relaxed)
                    if !problems.isEmpty { inconsistent.withLock { $0 += problems } }
                    previous = timing
                }
                readerDone.signal()
            }.start()

            // The holder, beside the producers: once the first task block runs, it sends a change
            // of its own (buffered behind the held block, so stamped before `since`), lets the
            // clock move on by `hold`, then releases the block.
            let held = Locked<(span: Duration, age: Duration?, ageAtLeast: Duration)?>(uncounted: nil)
            onThreads(Self.producers + 1) { thread in
                guard thread == Self.producers else {
                    for sequence in 0..<perProducer { _ = receptionist.send(stamp(thread, sequence)) }
                    return
                }
                #expect(wait(firstBlockRuns), "the first task block ran")
                _ = receptionist.send(stamp(thread, 0))
                let since = DispatchTime.now().uptimeNanoseconds
                // Spin on the clock, not sleep: the bounds are what the clock shows, however long
                // the spin takes.
                while elapsed(since: since) < Self.hold {}
                let beforeSnapshot = elapsed(since: since)
                let age = receptionist.statistics.timing.oldestPendingAge
                let span = elapsed(since: since)
                releaseFirstBlock.signal()
                held.withLock { $0 = (span, age, beforeSnapshot) }
            }
            receptionist.finish()
            #expect(waitUntil { receptionist.isFinished })
            stop.store(true, ordering: .releasing)
            #expect(wait(readerDone))

            let total = Self.producers * perProducer + 1
            #expect(checker.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            #expect(inconsistent.withLock { $0 }.isEmpty, "\(inconsistent.withLock { $0.prefix(5) })")
            #expect(snapshots.load(ordering: .relaxed) > 0)
            let timing = receptionist.statistics.timing
            #expect(Self.problems(timing, after: timing, lifetime: elapsed(since: created)).isEmpty, "\(timing)")
            #expect(timing.oldestPendingAge == nil, "nothing waits once finished")
            guard let (span, age, ageAtLeast) = held.withLock({ $0 }) else {
                Issue.record("the first task block was not held")
                return
            }
            // The holder's change was stamped before `since` and was pending when the snapshot
            // read the clock, after `ageAtLeast`.
            #expect(age.map { $0 >= ageAtLeast } == true, "age \(String(describing: age)) ≥ \(ageAtLeast)")
            // The first task block (timed: it is the first of its segment) started before `since`
            // and returned after the holder released it, `span` later; the holder's change was
            // taken after that.
            #expect(timing.longestTaskBlock.map { $0 >= span } == true, "\(timing), held \(span)")
            #expect(timing.longestWait.map { $0 >= span } == true, "\(timing), held \(span)")
            // Every segment ran to its end: each timed task block lies within its drain.
            #expect(timing.longestDrain.map { $0 >= timing.longestTaskBlock ?? .zero } == true, "\(timing)")
        }

        /// What is wrong with `timing`, a snapshot taken at most `lifetime` after the receptionist
        /// was made, given `previous`, the snapshot the same reader took before it.
        static func problems(
            _ timing: ReceptionistStatistics.Timing,
            after previous: ReceptionistStatistics.Timing,
            lifetime: Duration
        ) -> [String] {
            var problems: [String] = []
            // Every stamp and every reading lies within the receptionist's lifetime.
            let figures = [
                ("oldest pending age", timing.oldestPendingAge), ("last wait", timing.lastWait),
                ("longest wait", timing.longestWait), ("longest task block", timing.longestTaskBlock),
                ("longest drain", timing.longestDrain),
            ]
            for case (let name, let figure?) in figures where figure > lifetime {
                problems.append("\(name) \(figure) > the receptionist's lifetime \(lifetime)")
            }
            // A longest figure is replaced only by a longer one.
            let longest = [
                ("longest wait", previous.longestWait, timing.longestWait),
                ("longest task block", previous.longestTaskBlock, timing.longestTaskBlock),
                ("longest drain", previous.longestDrain, timing.longestDrain),
            ]
            for case (let name, let before?, let now) in longest where now.map({ $0 < before }) ?? true {
                problems.append("\(name) shrank from \(before) to \(now.map { "\($0)" } ?? "nil")")
            }
            return problems
        }

        /// Issue 41, item 5: a new receptionist's statistics, read from another thread while its
        /// first batch is delivered, as a new user would. The drain writes its figures outside the
        /// lock; a snapshot must still be one that could have been true at one moment: no longest
        /// wait without a last one (once seen in 6–10 % of receptionists), no last wait longer
        /// than the longest, no timed task block longer than the drain it ran in (or without one).
        @Test func aNewReceptionistsFirstBatchIsSeenAtOneMoment() {
            let receptionists = scaled(600)
            let inconsistent = Locked<[String]>(uncounted: [])
            let snapshots = AtomicValue<Int>(0)
            let queue = DispatchQueue(label: "TimingStressTests.firstBatch")
            for index in 0..<receptionists {
                let receptionist = Receptionist<Int>(on: queue) { _ in }
                let polling = DispatchSemaphore(value: 0)
                let stop = AtomicValue<Bool>(false)
                let pollerDone = DispatchSemaphore(value: 0)
                Thread {
                    polling.signal()
                    while !stop.load(ordering: .acquiring) {
                        let problems = Self.inconsistencies(of: receptionist.statistics.timing)
                        snapshots.add(1, ordering: .relaxed)
                        if !problems.isEmpty { inconsistent.withLock { $0.append("#\(index): \(problems)") } }
                    }
                    pollerDone.signal()
                }.start()
                #expect(wait(polling))
                for value in 0..<100 { _ = receptionist.send(value) }
                receptionist.finish()
                #expect(waitUntil { receptionist.isFinished })
                stop.store(true, ordering: .releasing)
                #expect(wait(pollerDone))
                let problems = Self.inconsistencies(of: receptionist.statistics.timing)
                #expect(problems.isEmpty, "once finished: \(problems)")
            }
            let found = inconsistent.withLock { $0 }
            let affected = Set(found.map { $0.prefix { $0 != ":" } }).count
            let message =
                "\(found.count) inconsistent snapshots of \(snapshots.load(ordering: .relaxed)) in \(affected) of "
                + "\(receptionists) receptionists, such as \(found.prefix(3))"
            #expect(found.count == 0, Comment(rawValue: message))
        }

        /// What in `timing` could not have been true at one moment.
        static func inconsistencies(of timing: ReceptionistStatistics.Timing) -> [String] {
            var problems: [String] = []
            if (timing.lastWait == nil) != (timing.longestWait == nil) {
                func text(_ duration: Duration?) -> String { duration.map { "\($0)" } ?? "nil" }
                problems.append("last wait \(text(timing.lastWait)), longest \(text(timing.longestWait))")
            }
            if let last = timing.lastWait, let longest = timing.longestWait, last > longest {
                problems.append("last wait \(last) > longest \(longest)")
            }
            if let block = timing.longestTaskBlock {
                if let drain = timing.longestDrain {
                    if block > drain { problems.append("task block \(block) > its drain \(drain)") }
                } else {
                    problems.append("a task block \(block) without a drain")
                }
            }
            return problems
        }
    }
}

/// The time since `start`, an uptime in nanoseconds, on the clock the statistics read.
private func elapsed(since start: UInt64) -> Duration {
    .nanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - start))
}
