import Dispatch
import Testing

@testable import Receptionist

/// `BufferPolicy.watermarks(low:high:)` and what every `send` answers (issue 34): the decisions as
/// a thread-free state machine, then on a receptionist and a pipeline with stages driven by hand.
@Suite struct WatermarkPolicyTests {
    typealias Machine = ReceptionistStateMachine<Int>

    /// Counts the runs of a resume callback.
    final class Resumes: Sendable {
        private let runs = AtomicValue<Int>(0)
        private let states = Locked<[Writability]>(uncounted: [])
        var count: Int { runs.load(ordering: .acquiring) }
        /// What each run was given, in order.
        var given: [Writability] { states.withLock { $0 } }
        var callback: @Sendable () -> Void { { self.runs.add(1, ordering: .releasing) } }
        var stateCallback: @Sendable (Writability) -> Void {
            { state in
                self.states.withLock { $0.append(state) }
                self.runs.add(1, ordering: .releasing)
            }
        }
    }

    /// Runs what a machine handed out to run after its lock.
    private func wake(_ waiters: [Waiter]) {
        for waiter in waiters { waiter.wake() }
    }

    // MARK: - The strategy

    /// Every row of `WatermarkStrategy`'s transition table, and nothing else changes state.
    @Test func theStrategyPausesAtHighResumesAtLowAndEndsOnce() {
        var strategy = WatermarkStrategy(low: 2, high: 5)
        #expect(strategy.didRise(to: 4) == nil, "below high")
        #expect(strategy.didFall(to: 0) == nil, "writable does not resume")
        #expect(strategy.didRise(to: 5) == .paused, "at high")
        #expect(strategy.didRise(to: 9) == nil, "paused does not pause again")
        #expect(strategy.didFall(to: 3) == nil, "above low")
        #expect(strategy.didFall(to: 2) == .writable, "at low")
        #expect(strategy.didFall(to: 1) == nil, "writable stays writable")
        #expect(strategy.pauses == 1)
        #expect(strategy.didRise(to: 100) == .paused)
        #expect(strategy.pauses == 2)
        #expect(strategy.end(.finished) == .ended(.finished), "ends while paused")
        #expect(strategy.end(.cancelled) == nil, "the first end's reason stays")
        #expect(strategy.writability == .ended(.finished))
        #expect(strategy.didFall(to: 0) == nil && strategy.didRise(to: 100) == nil, "nothing after the end")
        var never = WatermarkStrategy.neverPausing
        #expect(never.didRise(to: Int.max - 1) == nil)
        #expect(never.end(.cancelled) == .ended(.cancelled))
    }

    // MARK: - The state machine

    /// The level counts every element not yet delivered: those waiting and those a drain took
    /// whose task block has not returned (issue 40, items 2 and 3).
    @Test func sendsAnswerPauseFromTheHighWatermarkUntilTheUndeliveredFallToTheLowOne() {
        var machine = Machine(policy: .watermarks(low: 2, high: 4)) { _ in }
        #expect(machine.enqueue(1).result == .accepted)
        #expect(machine.enqueue(2).result == .accepted)
        #expect(machine.enqueue(3).result == .accepted)
        #expect(machine.writability == .writable)
        #expect(machine.enqueue(4).result == .acceptedAboveHighWatermark, "the fourth undelivered reaches high")
        #expect(machine.writability == .paused)
        #expect(machine.enqueue(5).result == .acceptedAboveHighWatermark, "kept all the same")
        let resumes = Resumes()
        machine.whenWritable(resumes.stateCallback)
        #expect(machine.waitersToWake().isEmpty, "paused: the callback waits")
        #expect(machine.resumeThreshold == 3, "5 held, low 2: writable once 3 task blocks returned")
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 4)
        machine.noteDelivered(0)
        #expect(machine.writability == .paused, "taken by a drain is not delivered")
        machine.noteDelivered(2)
        #expect(machine.waitersToWake().isEmpty && machine.writability == .paused, "3 undelivered: above low")
        #expect(machine.enqueue(6).result == .acceptedAboveHighWatermark, "still paused between the marks")
        #expect(machine.resumeThreshold == 4, "the threshold rises with what arrives")
        machine.noteDelivered(3)
        #expect(machine.writability == .paused)
        machine.noteDelivered(4)
        #expect(machine.writability == .writable, "2 undelivered: at low")
        #expect(machine.resumeThreshold == .max)
        let woken = machine.waitersToWake()
        #expect(woken.count == 1)
        wake(woken)
        #expect(resumes.given == [.writable])
        #expect(machine.waitersToWake().isEmpty, "each callback once")
        #expect(machine.enqueue(7).result == .accepted, "writable again")
        #expect(chunk == [1, 2, 3, 4])
        let statistics = machine.statistics(delivered: 4)
        #expect(statistics.pauses == 1 && statistics.dropped == 0 && statistics.received == 7)
    }

    @Test func aPauseWithoutACallbackEndsAtTheLowWatermarkToo() {
        var machine = Machine(policy: .watermarks(low: 0, high: 1)) { _ in }
        #expect(machine.enqueue(1).result == .acceptedAboveHighWatermark)
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 8)
        machine.noteDelivered(1)
        #expect(machine.waitersToWake().isEmpty)
        #expect(machine.writability == .writable)
        #expect(machine.enqueue(2).result == .acceptedAboveHighWatermark, "a new pause")
        #expect(machine.statistics(delivered: 1).pauses == 2)
    }

    @Test func aCallbackRegisteredWhileWritableRunsAtOnceWithTheState() {
        var machine = Machine(policy: .watermarks(low: 1, high: 3)) { _ in }
        let resumes = Resumes()
        machine.whenWritable(resumes.stateCallback)
        wake(machine.waitersToWake())
        #expect(resumes.given == [.writable])
        var other = Machine(policy: .unbounded) { _ in }
        other.whenWritable(resumes.stateCallback)
        wake(other.waitersToWake())
        #expect(resumes.given == [.writable, .writable], "every other policy is writable until it ends")
    }

    @Test func cancelWhilePausedTellsEveryWaitingCallbackItEndedAndRefusesWhatFollows() {
        var machine = Machine(policy: .watermarks(low: 1, high: 2)) { _ in }
        _ = machine.enqueue(1)
        #expect(machine.enqueue(2).result == .acceptedAboveHighWatermark)
        let resumes = Resumes()
        machine.whenWritable(resumes.stateCallback)
        machine.whenWritable(resumes.stateCallback)
        #expect(machine.waitersToWake().isEmpty)
        #expect(machine.cancel() != nil)
        #expect(machine.writability == .ended(.cancelled), "not writable once ended")
        wake(machine.waitersToWake())
        #expect(resumes.given == [.ended(.cancelled), .ended(.cancelled)], "both producers told, once each")
        #expect(machine.enqueue(3).result == .refused(.cancelled))
        machine.whenWritable(resumes.stateCallback)
        wake(machine.waitersToWake())
        #expect(resumes.given.last == .ended(.cancelled), "after the end, a callback runs at once, told so")
        #expect(resumes.count == 3)
    }

    @Test func finishWhilePausedTellsEveryWaitingCallbackAtTheFinishCall() {
        var machine = Machine(policy: .watermarks(low: 1, high: 2)) { _ in }
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        let resumes = Resumes()
        machine.whenWritable(resumes.stateCallback)
        _ = machine.finish()
        wake(machine.waitersToWake())
        #expect(resumes.given == [.ended(.finished)], "at the finish call, not once delivered")
        #expect(machine.enqueue(3).result == .refused(.finished))
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 8)
        #expect(chunk == [1, 2], "what was accepted is still delivered")
    }

    @Test func everyPolicySaysWhatBecameOfTheElement() {
        var oldest = Machine(policy: .dropOldest(capacity: 1)) { _ in }
        #expect(oldest.enqueue(1).result == .accepted)
        #expect(oldest.enqueue(2).result == .acceptedEvictingOldest)
        var newest = Machine(policy: .dropNewest(capacity: 1)) { _ in }
        #expect(newest.enqueue(1).result == .accepted)
        #expect(newest.enqueue(2).result == .dropped)
        var coalescing = Machine(
            policy: .unbounded, merge: { pending, new in swap(&pending, &new) }, handler: { _ in })
        #expect(coalescing.enqueue(1).result == .accepted)
        #expect(coalescing.enqueue(2).result == .coalesced)
        var waiting = Machine(policy: .waiting(capacity: 1)) { _ in }
        #expect(waiting.enqueue(1).result == .accepted)
        #expect(waiting.enqueue(2).action == .full)
    }

    // MARK: - A receptionist

    @Test func aReceptionistPausesItsProducerAndCallsItBackOnItsTarget() {
        let target = ManualTarget()
        let producerTarget = ManualTarget()
        let delivered = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 1, high: 3), drainBudget: 1) {
            delivered.append($0)
        }
        #expect(receptionist.send(0) == .accepted)
        #expect(receptionist.send(1) == .accepted)
        #expect(receptionist.send(2).shouldPause)
        #expect(!receptionist.isWritable)
        let resumes = Resumes()
        receptionist.whenWritable(on: producerTarget, resumes.callback)
        #expect(receptionist.send(3) == .acceptedAboveHighWatermark)
        #expect(target.runNext())  // delivers 0 (3 left)
        #expect(target.runNext())  // delivers 1 (2 left)
        #expect(producerTarget.pendingCount == 0, "above low: not yet")
        #expect(target.runNext())  // takes 2: 1 left, at low
        #expect(producerTarget.pendingCount == 1, "called back on the producer's own target")
        #expect(resumes.count == 0, "not on the thread of the drain")
        producerTarget.runAll()
        #expect(resumes.count == 1)
        #expect(receptionist.isWritable)
        #expect(receptionist.send(4) == .accepted)
        target.runAll()
        #expect(delivered.values == [0, 1, 2, 3, 4])
        let statistics = receptionist.statistics
        #expect(statistics.pauses == 1 && statistics.delivered == 5 && statistics.dropped == 0)
        #expect(producerTarget.pendingCount == 0, "once")
    }

    @Test func releasingAPausedReceptionistCallsItsProducerBack() {
        let target = ManualTarget()
        let resumes = Resumes()
        var receptionist: Receptionist<Int>? = Receptionist<Int>(on: target, buffering: .watermarks(low: 0, high: 1)) {
            _ in
        }
        #expect(receptionist!.send(0).shouldPause)
        receptionist!.whenWritable(on: .immediate, resumes.callback)
        #expect(resumes.count == 0)
        receptionist = nil
        #expect(resumes.count == 1, "cancelled by its release: the producer hears of it")
        target.runAll()
    }

    @Test func sendsAnswerWhatBecameOfTheElementOnEveryPolicy() {
        let target = ManualTarget()
        let newest = Receptionist<Int>(on: target, buffering: .dropNewest(capacity: 1)) { _ in }
        #expect(newest.send(0) == .accepted)
        #expect(newest.send(1) == .dropped, "not true for an element the policy drops")
        #expect(!newest.send(1).isAccepted)
        let oldest = Receptionist<Int>(on: target, buffering: .dropOldest(capacity: 1)) { _ in }
        #expect(oldest.send(0) == .accepted)
        #expect(oldest.send(1) == .acceptedEvictingOldest)
        newest.cancel()
        #expect(newest.send(2) == .refused(.cancelled))
        oldest.finish()
        #expect(oldest.send(2) == .refused(.finished))
        target.runAll()
    }

    @Test func aBoundedPipelineSaysWhichElementsItsIntakeDropped() {
        let target = ManualTarget()
        let gate = DispatchSemaphore(value: 0)
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { value in
                if value == 0 { gate.wait() }  // holds the stages
                return value
            }
            .deliver(on: target, buffering: .dropNewest(capacity: 2)) { _ in }
        let first = DispatchQueue(label: "WatermarkPolicyTests.first")
        first.async { _ = receptionist.send(0) }  // runs the stages, held on 0
        #expect(waitUntil(seconds: 30) { receptionist.statistics.received == 0 && gateWaiting(receptionist) })
        #expect(receptionist.send(1) == .accepted)
        #expect(receptionist.send(2) == .accepted)
        #expect(receptionist.send(3) == .dropped, "two wait in front of the stages already")
        #expect(receptionist.statistics.pendingBeforeStages == 2)
        gate.signal()
        #expect(waitUntil(seconds: 30) { receptionist.statistics.pendingBeforeStages == 0 })
        receptionist.cancel()
    }

    /// Whether the stages of `receptionist` are busy (its intake's drain is scheduled).
    private func gateWaiting(_ receptionist: Receptionist<Int>) -> Bool {
        receptionist.stagedPipeline?.intake.state.withLock { $0.isDrainScheduled } ?? false
    }

    // MARK: - A pipeline with stages

    /// The backlog counts on both sides of the stages: the intake's drain parks while the outputs
    /// behind them stand for `high`, the elements then wait in front of them, and the producer is
    /// paused there; it is called back once, when the consumer has taken the backlog down.
    @Test func aPipelineWithStagesPausesItsProducerInFrontOfTheStages() {
        let target = ManualTarget()
        let delivered = Recorder<Int>()
        let hold = DispatchSemaphore(value: 0)
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { value in
                if value == 0 { hold.wait() }  // holds the stages (on the stage queue) on 0
                return value * 10
            }
            .deliver(on: target, buffering: .watermarks(low: 2, high: 4)) { delivered.append($0) }
        #expect(receptionist.send(0) == .accepted)
        #expect(waitUntil(seconds: 30) { receptionist.statistics.pendingBeforeStages == 0 }, "0 is in the stages")
        var results: [SendResult] = []
        for value in 1..<10 { results.append(receptionist.send(value)) }
        // 0 is held in the stages, so the pause comes at the fourth element held: 3.
        #expect(results[..<2] == [.accepted, .accepted])
        #expect(results[2...].allSatisfy { $0 == .acceptedAboveHighWatermark }, "\(results)")
        #expect(!receptionist.isWritable)
        let resumes = Resumes()
        receptionist.whenWritable(on: .immediate, resumes.callback)
        hold.signal()
        // The stages run until the outputs behind them stand for `high` (4), then park: 0...3 wait
        // behind the stages, 4...9 in front of them, and the producer stays paused.
        #expect(
            waitUntil(seconds: 30) {
                let statistics = receptionist.statistics
                return statistics.pending == 4 && statistics.pendingBeforeStages == 6
            })
        #expect(resumes.count == 0 && !receptionist.isWritable)
        #expect(receptionist.send(10) == .acceptedAboveHighWatermark)
        // The consumer takes the backlog down: the parked stages resume, the intake falls to low.
        #expect(
            waitUntil(seconds: 30) {
                target.runAll()
                return delivered.count == 11
            })
        #expect(delivered.values == (0...10).map { $0 * 10 })
        #expect(resumes.count == 1, "called back once")
        #expect(receptionist.isWritable)
        #expect(receptionist.send(11) == .accepted)
        let final = receptionist.statistics
        #expect(final.pauses == 1 && final.maxPending <= 4 && final.maxPendingBeforeStages == 9, "1...9 waited at once")
        receptionist.cancel()
    }
}
