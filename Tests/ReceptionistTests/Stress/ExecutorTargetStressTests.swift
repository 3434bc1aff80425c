import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// An executor target under load (scaled by `RECEPTIONIST_STRESS_SCALE`): many threads
    /// sending, submitting and pausing at once, the work running on a ``ToyEventLoop``.
    ///
    /// Each case runs its threads from a thread of its own (``onOwnThread(seconds:caller:fileID:line:_:)``):
    /// the target's jobs start as tasks, which need a thread of the cooperative pool.
    @Suite(.serialized, .tags(.stress))
    struct ExecutorTargetStressTests {
        static let producers = 8

        /// What a case saw, checked by the test once its threads are done.
        struct Outcome: Sendable {
            var report = OrderChecker.Report()
            var offLoop = 0
            var overlaps = 0
            var delivered = false
            var resumes = 0
            var pauses = 0
            var statistics: ReceptionistStatistics?
        }

        /// 8 producers into one receptionist on the loop: every event once, in each producer's
        /// order, every task block on the loop, one at a time.
        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
        @Test func producersIntoOneReceptionistLoseNothingAndKeepOrder() async {
            let perProducer = eventsPerThread(50_000, threads: Self.producers)
            let total = Self.producers * perProducer
            let loop = ToyEventLoop(name: "ExecutorTargetStressTests.send")
            let outcome = await onOwnThread { () -> Outcome in
                let checker = OrderChecker()
                let offLoop = AtomicValue<Int>(0)
                let running = AtomicValue<Int>(0)
                let overlaps = AtomicValue<Int>(0)
                let ended = DispatchSemaphore(value: 0)
                let receptionist = Receptionist<Int>(on: .executor(loop)) { value in
                    if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                        overlaps.add(1, ordering: .relaxed)
                    }
                    if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                    checker.record(value)
                    running.subtract(1, ordering: .acquiringAndReleasing)
                }
                onThreads(Self.producers) { producer in
                    for sequence in 0..<perProducer { receptionist.send(stamp(producer, sequence)) }
                }
                receptionist.finish { ended.signal() }
                var outcome = Outcome()
                outcome.delivered = wait(ended, seconds: watchdogSeconds)
                outcome.report = checker.report
                outcome.offLoop = offLoop.load(ordering: .relaxed)
                outcome.overlaps = overlaps.load(ordering: .relaxed)
                outcome.statistics = receptionist.statistics
                return outcome
            }
            #expect(outcome.delivered, "the receptionist finished")
            #expect(outcome.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            #expect(outcome.offLoop == 0, "every task block on the executor")
            #expect(outcome.overlaps == 0, "task blocks never overlapped")
            #expect(outcome.statistics?.delivered == total)
            #expect(loop.shutdown())
        }

        /// 8 threads submitting straight to one target, and work on the loop submitting more:
        /// each work item runs once, on the loop, in its submitting thread's order.
        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
        @Test func submissionsFromManyThreadsRunOnceInEachThreadsOrder() async {
            let perThread = eventsPerThread(20_000, threads: Self.producers)
            let loop = ToyEventLoop(name: "ExecutorTargetStressTests.submit")
            let target = ExecutorTarget(loop)
            let outcome = await onOwnThread { () -> Outcome in
                let checker = OrderChecker()
                let offLoop = AtomicValue<Int>(0)
                let running = AtomicValue<Int>(0)
                let overlaps = AtomicValue<Int>(0)
                // Every item runs (its thread's, and for one in 16, a follow-up it submits from
                // the loop, checked under a producer number of its own).
                let expected = Self.producers * perThread + Self.producers * ((perThread + 15) / 16)
                let ran = AtomicValue<Int>(0)
                let done = DispatchSemaphore(value: 0)
                @Sendable func record(_ stamped: Int) {
                    if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                        overlaps.add(1, ordering: .relaxed)
                    }
                    if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                    checker.record(stamped)
                    running.subtract(1, ordering: .acquiringAndReleasing)
                    if ran.add(1, ordering: .acquiringAndReleasing).newValue == expected { done.signal() }
                }
                onThreads(Self.producers) { thread in
                    for sequence in 0..<perThread {
                        target.submit {
                            record(stamp(thread, sequence))
                            if sequence % 16 == 0 {
                                target.submit { record(stamp(Self.producers + thread, sequence / 16)) }
                            }
                        }
                    }
                }
                var outcome = Outcome()
                outcome.delivered = wait(done, seconds: watchdogSeconds)
                outcome.report = checker.report
                outcome.offLoop = offLoop.load(ordering: .relaxed)
                outcome.overlaps = overlaps.load(ordering: .relaxed)
                return outcome
            }
            let expected = Self.producers * perThread + Self.producers * ((perThread + 15) / 16)
            #expect(outcome.delivered, "every work item ran")
            #expect(outcome.report == OrderChecker.Report(received: expected, duplicatedOrReordered: 0, gaps: 0))
            #expect(outcome.offLoop == 0, "every work item on the executor")
            #expect(outcome.overlaps == 0, "work items never overlapped")
            #expect(target.jobs.waitingCount == 0)
            #expect(loop.shutdown())
        }

        /// 8 producers on a `.watermarks(low:high:)` receptionist on the loop, each pausing when
        /// its send says so and going on when its `whenWritable` block runs there: every resume
        /// runs once, on the loop, and every event is delivered once, in each producer's order.
        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
        @Test func pausedProducersAreResumedOnTheExecutorAndNothingIsLost() async {
            let perProducer = eventsPerThread(20_000, threads: Self.producers)
            let total = Self.producers * perProducer
            let loop = ToyEventLoop(name: "ExecutorTargetStressTests.watermarks")
            let target = ExecutorTarget(loop)
            let outcome = await onOwnThread { () -> Outcome in
                let checker = OrderChecker()
                let offLoop = AtomicValue<Int>(0)
                let pauses = AtomicValue<Int>(0)
                let resumes = AtomicValue<Int>(0)
                let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 16, high: 64)) { value in
                    if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                    checker.record(value)
                }
                let stranded = AtomicValue<Int>(0)
                // The loop is held until a producer pauses, so that the producers outrun it.
                let firstPause = DispatchSemaphore(value: 0)
                loop.execute { firstPause.wait() }
                onThreads(Self.producers) { producer in
                    for sequence in 0..<perProducer {
                        guard receptionist.send(stamp(producer, sequence)).shouldPause else { continue }
                        if pauses.add(1, ordering: .relaxed).newValue == 1 { firstPause.signal() }
                        let resume = DispatchSemaphore(value: 0)
                        receptionist.whenWritable(on: target) {
                            if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                            resumes.add(1, ordering: .relaxed)
                            resume.signal()
                        }
                        if !wait(resume, seconds: watchdogSeconds) { stranded.add(1, ordering: .relaxed) }
                    }
                }
                // No pause at all (too few events for the high watermark): let the loop go now.
                if pauses.load(ordering: .relaxed) == 0 { firstPause.signal() }
                let ended = DispatchSemaphore(value: 0)
                receptionist.finish { ended.signal() }
                var outcome = Outcome()
                outcome.delivered = wait(ended, seconds: watchdogSeconds) && stranded.load(ordering: .relaxed) == 0
                outcome.report = checker.report
                outcome.offLoop = offLoop.load(ordering: .relaxed)
                outcome.pauses = pauses.load(ordering: .relaxed)
                outcome.resumes = resumes.load(ordering: .relaxed)
                outcome.statistics = receptionist.statistics
                return outcome
            }
            #expect(outcome.delivered, "every producer was resumed and the receptionist finished")
            #expect(outcome.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            #expect(outcome.offLoop == 0, "every task block and resume block on the executor")
            #expect(outcome.resumes == outcome.pauses, "each pause resumed exactly once")
            #expect(outcome.pauses > 0 || total <= 64, "the producers outran the held loop")
            #expect(loop.shutdown())
        }
    }
}
