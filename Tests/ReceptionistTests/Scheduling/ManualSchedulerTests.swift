import Testing

@testable import Receptionist

@Suite struct ManualSchedulerTests {
    @Test func startsAtZeroWithNothingPending() {
        let scheduler = ManualScheduler()
        #expect(scheduler.now == .zero)
        #expect(scheduler.pendingCount == 0)
        #expect(scheduler.nextDeadline == nil)
    }

    @Test func runsDueWorkInDeadlineOrder() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<Int>()
        for second in [3, 1, 4, 2] {
            scheduler.submit(at: .zero + .seconds(second)) { recorder.append(second) }
        }
        #expect(scheduler.pendingCount == 4)
        #expect(scheduler.nextDeadline == .zero + .seconds(1))

        scheduler.advance(by: .milliseconds(2500))
        #expect(recorder.values == [1, 2])
        #expect(scheduler.now == .zero + .milliseconds(2500))
        #expect(scheduler.pendingCount == 2)
        #expect(scheduler.nextDeadline == .zero + .seconds(3))

        scheduler.advance(by: .seconds(10))
        #expect(recorder.values == [1, 2, 3, 4])
        #expect(scheduler.now == .zero + .milliseconds(12500))
        #expect(scheduler.pendingCount == 0)
    }

    @Test func breaksTiesBySubmissionOrder() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<String>()
        let one = SchedulerInstant.zero + .seconds(1)
        let two = SchedulerInstant.zero + .seconds(2)
        for name in ["a", "b", "c"] {
            scheduler.submit(at: two) { recorder.append("\(name)2") }
            scheduler.submit(at: one) { recorder.append("\(name)1") }
        }
        scheduler.advance(to: two)
        #expect(recorder.values == ["a1", "b1", "c1", "a2", "b2", "c2"])
    }

    @Test func setsNowToEachDeadlineWhileItsWorkRuns() {
        let scheduler = ManualScheduler()
        let seen = Recorder<SchedulerInstant>()
        let deadlines = [250, 1000, 1000, 1750].map { SchedulerInstant.zero + .milliseconds($0) }
        for deadline in deadlines {
            scheduler.submit(at: deadline) { seen.append(scheduler.now) }
        }
        scheduler.advance(by: .seconds(2))
        #expect(seen.values == deadlines)
        #expect(scheduler.now == .zero + .seconds(2))
    }

    @Test func runsWorkSubmittedDuringTheAdvanceIfItFallsDue() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<String>()
        scheduler.submit(at: .zero + .seconds(1)) {
            recorder.append("first at \(scheduler.now)")
            scheduler.submit(at: scheduler.now + .seconds(1)) {
                recorder.append("due at \(scheduler.now)")
            }
            scheduler.submit(at: scheduler.now + .seconds(10)) {
                recorder.append("later at \(scheduler.now)")
            }
            scheduler.submit { recorder.append("immediate at \(scheduler.now)") }
        }
        scheduler.advance(by: .seconds(5))
        #expect(
            recorder.values == [
                "first at t+1.0 seconds", "immediate at t+1.0 seconds", "due at t+2.0 seconds",
            ]
        )
        #expect(scheduler.now == .zero + .seconds(5))
        #expect(scheduler.pendingCount == 1)
        #expect(scheduler.nextDeadline == .zero + .seconds(11))

        scheduler.advance(to: .zero + .seconds(11))
        #expect(recorder.values.last == "later at t+11.0 seconds")
        #expect(scheduler.pendingCount == 0)
    }

    @Test func workSubmittedAtTheTargetRunsInTheSameAdvance() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<Int>()
        let target = SchedulerInstant.zero + .seconds(3)
        scheduler.submit(at: .zero + .seconds(1)) {
            scheduler.submit(at: target) { recorder.append(2) }
            recorder.append(1)
        }
        scheduler.advance(to: target)
        #expect(recorder.values == [1, 2])
    }

    @Test func doesNotRunCancelledWork() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<String>()
        let cancelledEarly = scheduler.submit(at: .zero + .seconds(1)) { recorder.append("early") }
        let cancelledByWork = scheduler.submit(at: .zero + .seconds(3)) { recorder.append("late") }
        scheduler.submit(at: .zero + .seconds(2)) {
            recorder.append("canceller")
            cancelledByWork.cancel()
        }
        cancelledEarly.cancel()
        #expect(cancelledEarly.isCancelled)
        #expect(scheduler.pendingCount == 2)
        #expect(scheduler.nextDeadline == .zero + .seconds(2))

        scheduler.advance(by: .seconds(5))
        #expect(recorder.values == ["canceller"])
        #expect(scheduler.pendingCount == 0)
        #expect(scheduler.nextDeadline == nil)
    }

    @Test func releasesCancelledWorkAtOnce() {
        let scheduler = ManualScheduler()
        let counter = LifetimeCounter()
        let handle: ScheduledWork
        do {
            let witness = LifetimeWitness(counter)
            handle = scheduler.submit(at: .zero + .seconds(1)) { witness.touch() }
        }
        #expect(counter.deinitialized == 0)
        handle.cancel()
        #expect(counter.deinitialized == 1)
    }

    @Test func submitQueuesWorkUntilRun() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<Int>()
        scheduler.submit { recorder.append(1) }
        scheduler.submit { recorder.append(2) }
        #expect(recorder.values.isEmpty)
        #expect(scheduler.pendingCount == 2)

        scheduler.run()
        #expect(recorder.values == [1, 2])
        #expect(scheduler.now == .zero)
    }

    @Test func runRunsWorkItSubmitsForNowButNotLater() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<Int>()
        scheduler.submit {
            recorder.append(1)
            scheduler.submit { recorder.append(2) }
            scheduler.submit(at: scheduler.now + .nanoseconds(1)) { recorder.append(3) }
        }
        scheduler.run()
        #expect(recorder.values == [1, 2])
        #expect(scheduler.pendingCount == 1)
    }

    @Test func runsPastDeadlinesWithoutMovingTheClockBack() {
        let scheduler = ManualScheduler()
        let seen = Recorder<SchedulerInstant>()
        scheduler.advance(to: .zero + .seconds(10))
        scheduler.submit(at: .zero + .seconds(3)) { seen.append(scheduler.now) }
        scheduler.run()
        #expect(seen.values == [.zero + .seconds(10)])
        #expect(scheduler.now == .zero + .seconds(10))
    }

    @Test func advanceToMovesTheClockWithNothingPending() {
        let scheduler = ManualScheduler()
        scheduler.advance(to: .zero + .milliseconds(1500))
        #expect(scheduler.now == .zero + .milliseconds(1500))
        scheduler.advance(to: scheduler.now)
        #expect(scheduler.now == .zero + .milliseconds(1500))
        scheduler.advance(by: .zero)
        #expect(scheduler.now == .zero + .milliseconds(1500))
    }

    @Test func runsWorkOnTheAdvancingCallWithoutOtherThreads() {
        let scheduler = ManualScheduler()
        let recorder = Recorder<Int>()
        scheduler.submit(at: .zero + .seconds(1)) { recorder.append(1) }
        scheduler.advance(by: .seconds(1))
        // Synchronous: done when advance returns.
        #expect(recorder.values == [1])
    }

    // MARK: Rejected calls

    @Test(.exitTest) func rejectsANegativeDuration() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ManualScheduler().advance(by: .seconds(-1))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            message.contains("ManualScheduler.advance(by:): duration must not be negative, got -1.0 seconds")
        )
    }

    @Test(.exitTest) func rejectsATargetBeforeNow() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = ManualScheduler()
            scheduler.advance(by: .seconds(2))
            scheduler.advance(to: .zero + .seconds(1))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            message.contains(
                "ManualScheduler.advance(to:): target must not be before now (t+2.0 seconds), got t+1.0 seconds"
            )
        )
    }

    @Test(.exitTest) func rejectsAnAdvanceFromInsideWork() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = ManualScheduler()
            scheduler.submit { scheduler.advance(by: .seconds(1)) }
            scheduler.run()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("ManualScheduler.advance(by:): called while the scheduler is already advancing"))
    }

    @Test(.exitTest) func rejectsARunFromInsideWork() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = ManualScheduler()
            scheduler.submit(at: .zero + .seconds(1)) { scheduler.run() }
            scheduler.advance(to: .zero + .seconds(1))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("ManualScheduler.run(): called while the scheduler is already advancing"))
    }
}
