import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// `ReceptionistStatistics.timing` and `MainThreadBudget` (issue 34, item 4): how late delivery
/// runs, on a clock the tests move by hand and a target they run by hand.
@Suite struct TimingStatisticsTests {
    /// A receptionist on a hand-run target whose task block moves the clock by `$0` milliseconds.
    func make(
        _ clock: ManualDeliveryClock,
        _ target: ManualTarget,
        drainBudget: Int = 256,
        watching: Bool = false,
        _ seen: Recorder<Int>
    ) -> Receptionist<Int> {
        Receptionist<Int>(
            on: target, drainBudget: drainBudget, clock: clock, watchingMainThreadBudget: watching
        ) { milliseconds in
            seen.append(milliseconds)
            clock.advance(by: .milliseconds(milliseconds))
        }
    }

    @Test func nothingIsMeasuredBeforeAnythingWaits() {
        let clock = ManualDeliveryClock()
        let receptionist = make(clock, ManualTarget(), Recorder())
        clock.advance(by: .seconds(1))
        #expect(receptionist.statistics.timing == ReceptionistStatistics.Timing())
    }

    @Test func theOldestWaitingChangeAgesUntilADrainTakesIt() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = make(clock, target, seen)

        _ = receptionist.send(2)
        #expect(receptionist.statistics.timing.oldestPendingAge == .zero, "stamped when buffered")
        clock.advance(by: .milliseconds(4))
        _ = receptionist.send(1)  // the same segment: the age is the oldest's
        clock.advance(by: .milliseconds(1))
        _ = receptionist.send(3)
        var timing = receptionist.statistics.timing
        #expect(timing.oldestPendingAge == .milliseconds(5))
        #expect(timing.lastWait == nil && timing.longestWait == nil, "nothing delivered yet")

        // The drain takes the three at 5 ms; the task blocks take 2, 1 and 3 ms.
        #expect(target.runAll() == 1)
        #expect(seen.values == [2, 1, 3])
        timing = receptionist.statistics.timing
        #expect(timing.oldestPendingAge == nil, "nothing waits")
        #expect(timing.lastWait == .milliseconds(5), "the oldest of the segment waited 5 ms")
        #expect(timing.longestWait == .milliseconds(5))
        #expect(timing.longestTaskBlock == .milliseconds(2), "the first task block of a segment is timed")
        #expect(timing.longestDrain == .milliseconds(6), "the drain held the target for all three")

        // A later burst that waits less: the last wait changes, the longest stays.
        _ = receptionist.send(1)
        clock.advance(by: .milliseconds(3))
        #expect(receptionist.statistics.timing.oldestPendingAge == .milliseconds(3))
        target.runAll()
        timing = receptionist.statistics.timing
        #expect(timing.lastWait == .milliseconds(3))
        #expect(timing.longestWait == .milliseconds(5))
        #expect(timing.longestTaskBlock == .milliseconds(2))
        #expect(timing.longestDrain == .milliseconds(6))
    }

    @Test func aSlowTaskBlockAloneInItsSegmentIsTimedExactly() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let receptionist = make(clock, target, Recorder())
        for milliseconds in [1, 30, 2] {
            _ = receptionist.send(milliseconds)
            target.runAll()  // one change per drain: each is the first of its segment
        }
        #expect(receptionist.statistics.timing.longestTaskBlock == .milliseconds(30))
        #expect(receptionist.statistics.timing.longestDrain == .milliseconds(30))
    }

    @Test func aDrainSplitByItsBudgetStampsBothPartsWithTheOldest() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let receptionist = make(clock, target, drainBudget: 2, Recorder())
        for _ in 0..<3 { _ = receptionist.send(1) }
        clock.advance(by: .milliseconds(10))
        #expect(target.runNext(), "the first drain runs two and yields")
        // The third waited since its segment started; it is stamped with the whole segment's time.
        #expect(receptionist.statistics.timing.oldestPendingAge == .milliseconds(12))
        #expect(receptionist.statistics.timing.longestDrain == .milliseconds(2))
        target.runAll()
        #expect(receptionist.statistics.timing.lastWait == .milliseconds(12))
        #expect(receptionist.statistics.timing.oldestPendingAge == nil)
    }

    @Test func aSplitSegmentTakesNoMoreAppendsSoItsStampIsNotPassedOn() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let receptionist = make(clock, target, drainBudget: 2, Recorder())
        // Each round: three changes (task blocks of 0 ms) wait 10 ms; a drain takes two of them
        // (splitting their segment) and yields; the third is the oldest left. Appends to the
        // segment it is in would keep the first round's stamp, and its age would grow by 10 ms a
        // round.
        for round in 0..<5 {
            for _ in 0..<3 { _ = receptionist.send(0) }
            clock.advance(by: .milliseconds(10))
            #expect(target.runNext())
            #expect(
                receptionist.statistics.timing.oldestPendingAge == .milliseconds(10), "round \(round)")
            // A change sent now starts a segment of its own: it has waited nothing.
            _ = receptionist.send(0)
            target.runAll()
            #expect(receptionist.statistics.timing.lastWait.map { $0 < .milliseconds(1) } == true)
            #expect(receptionist.statistics.timing.longestWait == .milliseconds(10))
        }
    }

    /// A change sent while a drain runs (here by its own task block) waits until that drain takes
    /// its segment: the drain reads the clock per segment, when it takes one. A reading made
    /// earlier (once per drain) would precede the stamp, and the negative wait would be clamped to
    /// 1 ns (issue 41, item 4).
    @Test func aChangeSentDuringADrainWaitsUntilThatDrainTakesIt() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let box = Recorder<Receptionist<Int>>()
        let receptionist = Receptionist<Int>(on: target, clock: clock) { value in
            seen.append(value)
            clock.advance(by: .milliseconds(5))
            if value == 0 { _ = box.values.first?.send(1) }  // stamped 5 ms into the task block
            clock.advance(by: .milliseconds(2))
        }
        box.append(receptionist)
        _ = receptionist.send(0)
        clock.advance(by: .milliseconds(10))
        #expect(target.runAll() == 1, "one drain takes both segments")
        #expect(seen.values == [0, 1])
        let timing = receptionist.statistics.timing
        #expect(timing.lastWait == .milliseconds(2), "sent at 15 ms, taken at 17 ms")
        #expect(timing.longestWait == .milliseconds(10))
        #expect(timing.longestTaskBlock == .milliseconds(7))
        #expect(timing.longestDrain == .milliseconds(14), "from 10 ms to 24 ms")
        box.values.first?.cancel()
    }

    /// A drain that goes from one segment straight to the next takes the end of the one as the
    /// start of the other (issue 42, item 3): when each change is a segment of its own (here each
    /// task block sends the next change, 1 ms into its 2 ms), the drain reads the clock once per
    /// change, not twice, and the figures are those two readings would have given.
    @Test func aDrainReadsTheClockOncePerSegmentWhenItGoesStraightOn() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let box = Recorder<Receptionist<Int>>()
        let receptionist = Receptionist<Int>(on: target, clock: clock) { value in
            clock.advance(by: .milliseconds(1))
            if value > 0 { _ = box.values.first?.send(value - 1) }
            clock.advance(by: .milliseconds(1))
        }
        box.append(receptionist)
        _ = receptionist.send(5)
        clock.advance(by: .milliseconds(10))
        let readsBefore = clock.reads
        #expect(target.runAll() == 1, "one drain takes all six segments")
        // 5 stamps (the sends from the task blocks), the first take, and the end of each segment.
        #expect(clock.reads - readsBefore == 5 + 1 + 6)
        let timing = receptionist.statistics.timing
        #expect(timing.lastWait == .milliseconds(1), "each change sent 1 ms before its sender returned")
        #expect(timing.longestWait == .milliseconds(10))
        #expect(timing.longestTaskBlock == .milliseconds(2))
        #expect(timing.longestDrain == .milliseconds(12))
        #expect(timing.oldestPendingAge == nil)
        box.values.first?.cancel()
    }

    @Test func aCancelFromATaskBlockStillShowsInTheLongestDrain() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let box = Recorder<Receptionist<Int>>()
        let receptionist = Receptionist<Int>(on: target, clock: clock) { milliseconds in
            clock.advance(by: .milliseconds(milliseconds))
            if milliseconds == 30 { box.values.first?.cancel() }
        }
        box.append(receptionist)
        for milliseconds in [1, 30, 1] { _ = receptionist.send(milliseconds) }
        target.runAll()
        let timing = receptionist.statistics.timing
        #expect(timing.longestTaskBlock == .milliseconds(1), "only the first task block of the segment is timed")
        #expect(timing.longestDrain == .milliseconds(31), "the slow task block shows in the drain")
        #expect(receptionist.statistics.discarded == 1)
        box.values.first?.cancel()
    }

    @Test func aCancelLeavesNothingWaitingAndTimesNothingMore() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let receptionist = make(clock, target, Recorder())
        _ = receptionist.send(1)
        clock.advance(by: .milliseconds(7))
        receptionist.cancel()
        target.runAll()
        let timing = receptionist.statistics.timing
        #expect(timing.oldestPendingAge == nil, "the discarded change no longer waits")
        #expect(timing.lastWait == nil && timing.longestTaskBlock == nil, "its task block never ran")
        #expect(receptionist.statistics.discarded == 1)
    }

    // MARK: - A stalled task block (issue 40, item 7)

    /// A task block that stalls on the value `stallsOn` until the test lets it go.
    final class Stall: Sendable {
        let stallsOn: Int
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        init(on value: Int) { stallsOn = value }

        func taskBlock(_ value: Int) {
            guard value == stallsOn else { return }
            entered.signal()
            release.wait()
        }
    }

    /// Runs `target`'s work on a thread of its own until none is left; the returned semaphore is
    /// signalled then.
    func runElsewhere(_ target: ManualTarget) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread {
            target.runAll()
            done.signal()
        }.start()
        return done
    }

    @Test(arguments: [BufferPolicy.watermarks(low: 10, high: 50), .unbounded])
    func aStalledFirstTaskBlockShowsItsAgeWhileItIsStalled(policy: BufferPolicy) {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let stall = Stall(on: 0)
        let receptionist = Receptionist<Int>(on: target, buffering: policy, clock: clock) { stall.taskBlock($0) }
        for value in 0..<100 { _ = receptionist.send(value) }
        clock.advance(by: .milliseconds(5))
        let drained = runElsewhere(target)
        #expect(wait(stall.entered))

        // The drain took all 100 at 5 ms; the first task block runs and has not returned.
        var statistics = receptionist.statistics
        #expect(statistics.pending == 0 && statistics.inFlight == 100)
        #expect(statistics.timing.oldestPendingAge == .milliseconds(5), "taken, not yet delivered")
        #expect(statistics.timing.lastWait == .milliseconds(5) && statistics.timing.longestWait == .milliseconds(5))
        clock.advance(by: .milliseconds(10))
        statistics = receptionist.statistics
        #expect(statistics.timing.oldestPendingAge == .milliseconds(15), "it ages while the block is stalled")
        #expect(statistics.timing.longestTaskBlock == .milliseconds(10), "the running task block, so far")
        #expect(statistics.timing.longestDrain == .milliseconds(10), "the running drain, so far")
        clock.advance(by: .milliseconds(20))
        statistics = receptionist.statistics
        #expect(statistics.timing.oldestPendingAge == .milliseconds(35))
        #expect(statistics.timing.longestTaskBlock == .milliseconds(30))
        #expect(statistics.timing.longestDrain == .milliseconds(30))
        #expect(statistics.timing.lastWait == .milliseconds(5), "waits are not affected")

        // Released: the other 99 take no time on this clock.
        stall.release.signal()
        #expect(wait(drained))
        statistics = receptionist.statistics
        #expect(statistics.delivered == 100 && statistics.inFlight == 0)
        #expect(
            statistics.timing
                == ReceptionistStatistics.Timing(
                    oldestPendingAge: nil, lastWait: .milliseconds(5), longestWait: .milliseconds(5),
                    longestTaskBlock: .milliseconds(30), longestDrain: .milliseconds(30)))
        clock.advance(by: .milliseconds(100))
        #expect(receptionist.statistics.timing.longestDrain == .milliseconds(30), "nothing runs any more")

        // Then as before: a change waits 3 ms and is delivered at once.
        _ = receptionist.send(1)
        clock.advance(by: .milliseconds(3))
        #expect(receptionist.statistics.timing.oldestPendingAge == .milliseconds(3))
        target.runAll()
        let timing = receptionist.statistics.timing
        #expect(timing.oldestPendingAge == nil)
        #expect(timing.lastWait == .milliseconds(3) && timing.longestWait == .milliseconds(5))
        #expect(timing.longestTaskBlock == .milliseconds(30) && timing.longestDrain == .milliseconds(30))
    }

    @Test func aTaskBlockStalledInTheMiddleOfItsSegmentShowsInTheAgeAndTheDrain() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let stall = Stall(on: 50)
        let receptionist = Receptionist<Int>(on: target, clock: clock) { stall.taskBlock($0) }
        for value in 0..<100 { _ = receptionist.send(value) }
        clock.advance(by: .milliseconds(5))
        let drained = runElsewhere(target)
        #expect(wait(stall.entered))
        clock.advance(by: .milliseconds(10))

        let statistics = receptionist.statistics
        #expect(statistics.delivered == 50 && statistics.inFlight == 50)
        // Per segment: the oldest change of the segment being delivered, delivered or not.
        #expect(statistics.timing.oldestPendingAge == .milliseconds(15))
        #expect(statistics.timing.longestDrain == .milliseconds(10))
        #expect(statistics.timing.longestTaskBlock == .nanoseconds(1), "only the first of the segment is timed")

        stall.release.signal()
        #expect(wait(drained))
        let timing = receptionist.statistics.timing
        #expect(timing.oldestPendingAge == nil)
        #expect(timing.longestDrain == .milliseconds(10))
        #expect(timing.longestTaskBlock == .nanoseconds(1))
    }

    @Test func aStalledTaskBlockBehindStagesShowsItsAge() {
        let clock = ManualDeliveryClock()
        let target = ManualTarget()
        let stall = Stall(on: 0)
        var delivery = Delivery<Int>(on: target, buffering: .watermarks(low: 10, high: 50)) { stall.taskBlock($0) }
        delivery.clock = DeliveryClock(manual: clock)
        let pipeline = Receptionist.pipeline(of: Int.self).map { $0 }.start(delivery)
        for value in 0..<20 { _ = pipeline.send(value) }
        // The intake (on the stage queue) hands all 20 through the stages, below the high mark.
        #expect(
            waitUntil {
                pipeline.statistics.pending == 20 && pipeline.statistics.pendingBeforeStages == 0
                    && pipeline.intakeStatistics?.inFlight == 0
            })
        clock.advance(by: .milliseconds(5))
        let drained = runElsewhere(target)
        #expect(wait(stall.entered))
        clock.advance(by: .milliseconds(10))

        var statistics = pipeline.statistics
        #expect(statistics.pending == 0 && statistics.inFlight == 20)
        #expect(statistics.timing.oldestPendingAge == .milliseconds(15), "behind the stages: \(statistics)")
        #expect(statistics.timing.longestTaskBlock == .milliseconds(10))
        #expect(statistics.timing.longestDrain == .milliseconds(10))

        stall.release.signal()
        #expect(wait(drained))
        statistics = pipeline.statistics
        #expect(statistics.delivered == 20)
        #expect(statistics.timing.oldestPendingAge == nil)
        #expect(statistics.timing.longestTaskBlock == .milliseconds(10))
        pipeline.cancel()
    }

    // MARK: - With stages (the system clock: only lower bounds are certain)

    @Test func changesWaitingInFrontOfStagesShowTheirAge() {
        let target = ManualTarget()
        // Never blocks: the intake takes everything and the gate parks the stages at the high mark.
        let pipeline = Receptionist.pipeline(of: Int.self).map { $0 }
            .deliver(on: target, buffering: .watermarks(low: 1, high: 2)) { _ in }
        for value in 0..<10 { _ = pipeline.send(value) }
        // The stages took their first inputs (their outputs wait for the held target) and parked
        // with the rest in front of them.
        #expect(
            waitUntil(seconds: 30) {
                pipeline.intakeStatistics?.pending ?? 0 >= 8 && pipeline.statistics.pending >= 1
            })
        let sent = DispatchTime.now()  // after every stamp, on both sides
        // Spin on the clock, not sleep: at least 2 ms after the last send.
        while DispatchTime.now().uptimeNanoseconds - sent.uptimeNanoseconds < 2_000_000 {}
        let age = pipeline.statistics.timing.oldestPendingAge
        #expect(age.map { $0 >= .milliseconds(2) } == true, "the inputs in front of the stages: \(pipeline.statistics)")
        pipeline.finish()
        // Finished once the delivery is; the intake's drain may still be running the stages on the
        // finish (which counts in the age until it returns, as every task block in progress does).
        #expect(
            waitUntil(seconds: 30) {
                target.runAll()
                return pipeline.isFinished && pipeline.intakeStatistics?.inFlight == 0
            })
        let timing = pipeline.statistics.timing
        #expect(timing.oldestPendingAge == nil)
        // The first outputs waited behind the stages from before the spin until `runAll()`. (How
        // long the *last* change waited depends on when the intake's drain took its segment: a
        // drain that took all ten at once took them at once.)
        #expect(timing.longestWait.map { $0 >= .milliseconds(2) } == true, "in front of and behind the stages")
        #expect(timing.longestDrain != nil)
    }

    // MARK: - The main-thread budget

    /// The type of change of the watched receptionists, so that a report from another test's
    /// main-queue delivery (the budget is process-wide) is told apart.
    struct Probe: Sendable {
        let milliseconds: Int
    }

    @Suite(.serialized) struct Budget {
        /// A receptionist of `Probe`s, watched as on the main thread, whose task block moves the
        /// clock by the probe's milliseconds.
        func watched(_ clock: ManualDeliveryClock, _ target: ManualTarget) -> Receptionist<Probe> {
            Receptionist<Probe>(on: target, clock: clock, watchingMainThreadBudget: true) {
                clock.advance(by: .milliseconds($0.milliseconds))
            }
        }

        @Test func everyTaskBlockOverTheBudgetIsReportedWithItsDuration() {
            let clock = ManualDeliveryClock()
            let target = ManualTarget()
            let reports = Recorder<SlowTaskBlock>()
            let receptionist = watched(clock, target)
            MainThreadBudget.reportTaskBlocks(longerThan: .milliseconds(10)) { slow in
                if slow.changeType.contains("Probe") { reports.append(slow) }
            }
            for milliseconds in [5, 20, 3, 12, 10] { _ = receptionist.send(Probe(milliseconds: milliseconds)) }
            target.runAll()  // one segment: every task block is timed all the same
            MainThreadBudget.stopReporting()
            #expect(reports.values.map(\.duration) == [.milliseconds(20), .milliseconds(12)])
            #expect(reports.values.allSatisfy { $0.budget == .milliseconds(10) })
            #expect(receptionist.statistics.timing.longestTaskBlock == .milliseconds(20), "every block timed")

            // Off: nothing reported, only the first task block of a segment timed.
            _ = receptionist.send(Probe(milliseconds: 1))
            _ = receptionist.send(Probe(milliseconds: 50))
            target.runAll()
            #expect(reports.count == 2)
            #expect(receptionist.statistics.timing.longestTaskBlock == .milliseconds(20))
        }

        @Test func aWatchedTaskBlockStalledInTheMiddleOfItsSegmentIsTimedWhileItRuns() {
            let clock = ManualDeliveryClock()
            let target = ManualTarget()
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let reports = Recorder<SlowTaskBlock>()
            let receptionist = Receptionist<Probe>(on: target, clock: clock, watchingMainThreadBudget: true) {
                clock.advance(by: .milliseconds($0.milliseconds))
                if $0.milliseconds == 0 {
                    entered.signal()
                    release.wait()
                }
            }
            MainThreadBudget.reportTaskBlocks(longerThan: .milliseconds(50)) { slow in
                if slow.changeType.contains("Probe") { reports.append(slow) }
            }
            for milliseconds in [2, 1, 0, 3] { _ = receptionist.send(Probe(milliseconds: milliseconds)) }
            let drained = DispatchSemaphore(value: 0)
            Thread {
                target.runAll()
                drained.signal()
            }.start()
            #expect(wait(entered))
            clock.advance(by: .milliseconds(20))
            // Every task block is timed, so the third shows while it runs.
            #expect(receptionist.statistics.timing.longestTaskBlock == .milliseconds(20))
            #expect(receptionist.statistics.timing.longestDrain == .milliseconds(23))
            clock.advance(by: .milliseconds(40))
            #expect(receptionist.statistics.timing.longestTaskBlock == .milliseconds(60))
            #expect(reports.count == 0, "reported once it returns")
            release.signal()
            #expect(wait(drained))
            MainThreadBudget.stopReporting()
            #expect(reports.values.map(\.duration) == [.milliseconds(60)])
            #expect(receptionist.statistics.timing.longestTaskBlock == .milliseconds(60))
            #expect(receptionist.statistics.timing.longestDrain == .milliseconds(66))
        }

        @Test func theReportsOwnTimeIsNotCountedAgainstTheNextTaskBlock() {
            let clock = ManualDeliveryClock()
            let target = ManualTarget()
            let reports = Recorder<SlowTaskBlock>()
            let receptionist = watched(clock, target)
            MainThreadBudget.reportTaskBlocks(longerThan: .milliseconds(10)) { slow in
                guard slow.changeType.contains("Probe") else { return }
                reports.append(slow)
                clock.advance(by: .milliseconds(100))  // a slow report
            }
            for milliseconds in [20, 5, 12] { _ = receptionist.send(Probe(milliseconds: milliseconds)) }
            target.runAll()
            MainThreadBudget.stopReporting()
            #expect(reports.values.map(\.duration) == [.milliseconds(20), .milliseconds(12)])
            #expect(receptionist.statistics.timing.longestTaskBlock == .milliseconds(20))
        }

        @Test func aReplacedReportIsReleasedOutsideEveryLock() throws {
            try #require(LockDiagnostics.isTracking, "the suite runs in a debug build")
            let verdicts = Recorder<Bool>()
            final class Captured: Sendable {
                let verdicts: Recorder<Bool>
                init(_ verdicts: Recorder<Bool>) { self.verdicts = verdicts }
                deinit { verdicts.append(LockDiagnostics.locksHeldByCurrentThread == 0) }
            }
            do {
                let first = Captured(verdicts)
                MainThreadBudget.reportTaskBlocks(longerThan: .seconds(1)) { _ in _ = first }
            }
            do {
                let second = Captured(verdicts)
                MainThreadBudget.reportTaskBlocks(longerThan: .seconds(1)) { _ in _ = second }  // replaces the first
            }
            MainThreadBudget.stopReporting()  // releases the second
            #expect(verdicts.values == [true, true], "each released report found no lock held")
        }

        @Test func aReceptionistOffTheMainThreadIsNotWatched() {
            let clock = ManualDeliveryClock()
            let target = ManualTarget()
            let reports = Recorder<SlowTaskBlock>()
            let receptionist = Receptionist<Probe>(on: target, clock: clock) {
                clock.advance(by: .milliseconds($0.milliseconds))
            }
            MainThreadBudget.reportTaskBlocks(longerThan: .milliseconds(1)) { slow in
                if slow.changeType.contains("Probe") { reports.append(slow) }
            }
            _ = receptionist.send(Probe(milliseconds: 5))
            target.runAll()
            MainThreadBudget.stopReporting()
            #expect(reports.count == 0)
        }

        @Test func theMainQueueAndMainActorAreWatched() {
            #expect(Delivery<Int>(on: DispatchQueue.main, buffering: .unbounded) { _ in }.watchesMainThreadBudget)
            #expect(Delivery<Int>.mainActor { _ in }.watchesMainThreadBudget)
            #expect(
                !Delivery<Int>(on: DispatchQueue(label: "other"), buffering: .unbounded) { _ in }
                    .watchesMainThreadBudget)
        }

        @Test(.exitTest) func aBudgetOfZeroIsRejectedWithItsName() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                MainThreadBudget.reportTaskBlocks(longerThan: .zero) { _ in }
            }
            let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
            #expect(
                message.contains(
                    "MainThreadBudget.reportTaskBlocks(longerThan:): budget must be greater than zero, got 0.0 seconds")
            )
        }
    }
}
