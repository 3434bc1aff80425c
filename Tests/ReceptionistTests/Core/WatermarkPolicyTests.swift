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
        var count: Int { runs.load(ordering: .acquiring) }
        var callback: @Sendable () -> Void { { self.runs.add(1, ordering: .releasing) } }
    }

    // MARK: - The state machine

    @Test func sendsAnswerPauseFromTheHighWatermarkUntilTheBacklogFallsToTheLowOne() {
        var machine = Machine(policy: .watermarks(low: 2, high: 4)) { _ in }
        #expect(machine.enqueue(1).result == .accepted)
        #expect(machine.enqueue(2).result == .accepted)
        #expect(machine.enqueue(3).result == .accepted)
        #expect(machine.isWritable)
        #expect(machine.enqueue(4).result == .acceptedAboveHighWatermark, "the fourth waiting reaches high")
        #expect(!machine.isWritable)
        #expect(machine.enqueue(5).result == .acceptedAboveHighWatermark, "kept all the same")
        let resumes = Resumes()
        #expect(machine.whenWritable(resumes.callback) == nil, "paused: the callback waits")
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 2)  // 3 left: above low
        #expect(machine.waitersToWake().isEmpty)
        #expect(!machine.isWritable)
        #expect(machine.enqueue(6).result == .acceptedAboveHighWatermark, "still paused between the marks")
        _ = machine.nextChunk(into: &chunk, maxCount: 2)  // 2 left: at low
        let woken = machine.waitersToWake()
        #expect(woken.count == 1)
        #expect(machine.isWritable)
        for waiter in woken { waiter.wake() }
        #expect(resumes.count == 1)
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
        #expect(machine.waitersToWake().isEmpty)
        #expect(machine.isWritable)
        #expect(machine.enqueue(2).result == .acceptedAboveHighWatermark, "a new pause")
        #expect(machine.statistics(delivered: 1).pauses == 2)
    }

    @Test func aCallbackRegisteredWhileWritableRunsAtOnce() {
        var machine = Machine(policy: .watermarks(low: 1, high: 3)) { _ in }
        let resumes = Resumes()
        machine.whenWritable(resumes.callback)?()
        #expect(resumes.count == 1)
        var other = Machine(policy: .unbounded) { _ in }
        other.whenWritable(resumes.callback)?()
        #expect(resumes.count == 2, "every other policy is always writable")
    }

    @Test func cancelWhilePausedRunsEveryWaitingCallbackAndRefusesWhatFollows() {
        var machine = Machine(policy: .watermarks(low: 1, high: 2)) { _ in }
        _ = machine.enqueue(1)
        #expect(machine.enqueue(2).result == .acceptedAboveHighWatermark)
        let resumes = Resumes()
        #expect(machine.whenWritable(resumes.callback) == nil)
        #expect(machine.whenWritable(resumes.callback) == nil)
        #expect(machine.cancel() != nil)
        for waiter in machine.waitersToWake() { waiter.wake() }
        #expect(resumes.count == 2, "both producers told, once each")
        #expect(machine.enqueue(3).result == .refused(.cancelled))
        machine.whenWritable(resumes.callback)?()
        #expect(resumes.count == 3, "after the end, a callback runs at once")
    }

    @Test func finishWhilePausedRunsEveryWaitingCallbackAndRefusesWhatFollows() {
        var machine = Machine(policy: .watermarks(low: 1, high: 2)) { _ in }
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        let resumes = Resumes()
        #expect(machine.whenWritable(resumes.callback) == nil)
        _ = machine.finish()
        for waiter in machine.waitersToWake() { waiter.wake() }
        #expect(resumes.count == 1)
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
        #expect(results[..<3] == [.accepted, .accepted, .accepted])
        #expect(results[3...].allSatisfy { $0 == .acceptedAboveHighWatermark }, "\(results)")
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
