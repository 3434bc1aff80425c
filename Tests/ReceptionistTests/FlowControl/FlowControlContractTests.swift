import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// The reproductions of issue 40, each as a test that failed on d9400bb: what flow control counts
/// (everything held and not yet delivered, on either side of the stages, inside the stages), when
/// it resumes (at `low`, not at a segment boundary), and that an end is not a resume.
@Suite struct FlowControlContractTests {
    /// A consumer whose first task block waits until the test lets it go.
    final class StalledConsumer: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private let stalled = AtomicValue<Bool>(false)

        /// Stalls the first call only.
        func stallOnce() {
            guard stalled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
            entered.signal()
            release.wait()
        }
    }

    /// A task block whose first call stalls (``StalledConsumer``), and which records the state
    /// its receptionist's producers are told as each call starts.
    final class StateRecorder<Event: Sendable>: Sendable {
        let consumer = StalledConsumer()
        private let states = Locked<[Writability]>(uncounted: [])
        private let receptionist = Locked<Receptionist<Event>?>(uncounted: nil)

        var block: @Sendable (Event) -> Void {
            { [self] _ in
                consumer.stallOnce()
                if let receptionist = receptionist.withLock({ $0 }) {
                    let state = receptionist.writability
                    states.withLock { $0.append(state) }
                }
            }
        }

        /// Starts recording `receptionist`'s state.
        func watch(_ receptionist: Receptionist<Event>) { self.receptionist.withLock { $0 = receptionist } }
        /// Stops (lets go of the receptionist).
        func stop() { receptionist.withLock { $0 = nil } }
        var seen: [Writability] { states.withLock { $0 } }
    }

    // MARK: - 2: the answer and the state count both sides of the stages

    /// `map`, low 0 / high 1, consumer stuck: the first send pauses, and the producer is not told
    /// to go on while its element is undelivered (d9400bb ran the block within milliseconds).
    @Test func behindAMapTheProducerStaysPausedWhileItsElementIsUndelivered() {
        let consumer = StalledConsumer()
        let queue = DispatchQueue(label: "FlowControlContractTests.map")
        let receptionist = Receptionist.pipeline(of: Int.self).map { $0 }
            .deliver(on: queue, buffering: .watermarks(low: 0, high: 1)) { _ in consumer.stallOnce() }
        #expect(receptionist.send(0) == .acceptedAboveHighWatermark)
        #expect(consumer.entered.wait(timeout: .now() + 60) == .success)
        let told = Locked<[Writability]>(uncounted: [])
        receptionist.whenWritable(on: .immediate) { state in told.withLock { $0.append(state) } }
        // The stages handed 0 on: it waits for (is in) its task block, so still paused.
        #expect(receptionist.writability == .paused)
        #expect(!receptionist.isWritable)
        #expect(told.withLock { $0 }.isEmpty)
        #expect(receptionist.statistics.delivered == 0)
        consumer.release.signal()
        #expect(waitUntil(seconds: 60) { told.withLock { $0 } == [.writable] }, "told once, when delivered")
        #expect(waitUntil(seconds: 60) { receptionist.statistics.delivered == 1 })
        receptionist.cancel()
    }

    /// One send at a time, `high` 10, behind a `map`, the consumer stuck: the tenth element held
    /// (on either side of the stages) is the one answered "pause" (d9400bb: 15 accepted, 0 pauses).
    @Test func behindAMapTheHighthHeldElementIsAnsweredPause() {
        let consumer = StalledConsumer()
        let queue = DispatchQueue(label: "FlowControlContractTests.oneAtATime")
        let receptionist = Receptionist.pipeline(of: Int.self).map { $0 }
            .deliver(on: queue, buffering: .watermarks(low: 2, high: 10)) { _ in consumer.stallOnce() }
        #expect(receptionist.send(0) == .accepted)
        #expect(consumer.entered.wait(timeout: .now() + 60) == .success)
        var results: [SendResult] = []
        for value in 1...14 {
            results.append(receptionist.send(value))
            // One at a time: the stages hand it on before the next, until the ten held (0...9)
            // fill the room behind them; then the elements wait in front of them.
            if value <= 9 {
                #expect(waitUntil(seconds: 60) { receptionist.statistics.pendingBeforeStages == 0 })
            }
        }
        #expect(results[..<8].allSatisfy { $0 == .accepted }, "\(results)")
        #expect(results[8...].allSatisfy { $0 == .acceptedAboveHighWatermark }, "the tenth held pauses: \(results)")
        #expect(receptionist.statistics.pauses == 1)
        consumer.release.signal()
        receptionist.finish()
        #expect(waitUntil(seconds: 60) { receptionist.isFinished })
        #expect(receptionist.statistics.delivered == 15)
    }

    // MARK: - 3: resume at low, not at a segment boundary

    /// low 10 / high 50, the first task block stalled, 100 sent: the producer is paused in every
    /// task block that starts while more than 10 are undelivered, and writable from the one that
    /// starts with 10 left (d9400bb: writable with 100 undelivered, the drain having taken them).
    @Test(arguments: [false, true])
    func theProducerResumesAtTheLowWatermarkExactly(staged: Bool) {
        let recorder = StateRecorder<Int>()
        let consumer = recorder.consumer
        let queue = DispatchQueue(label: "FlowControlContractTests.low")
        let policy = BufferPolicy.watermarks(low: 10, high: 50)
        let receptionist =
            staged
            ? Receptionist.pipeline(of: Int.self).map { $0 }.deliver(on: queue, buffering: policy, recorder.block)
            : Receptionist<Int>(on: queue, buffering: policy, recorder.block)
        recorder.watch(receptionist)
        for value in 0..<100 { _ = receptionist.send(value) }
        #expect(consumer.entered.wait(timeout: .now() + 60) == .success)
        #expect(!receptionist.isWritable, "100 undelivered")
        consumer.release.signal()
        #expect(waitUntil(seconds: 60) { recorder.seen.count == 100 })
        let states = recorder.seen
        // Block i reads the state after i blocks returned: 100 - i undelivered, itself included.
        let firstWritable = states.firstIndex(of: .writable) ?? 100
        // Never early. Behind stages, the output the stages are handing on at that moment counts
        // on both sides of them, so the resume may come one task block later.
        #expect(states[..<90].allSatisfy { $0 == .paused }, "paused while more than 10 are undelivered")
        if staged {
            #expect(firstWritable == 90 || firstWritable == 91, "\(firstWritable)")
        } else {
            #expect(firstWritable == 90, "resumed after the 90th task block returned, with 10 left")
        }
        #expect(states[firstWritable...].allSatisfy { $0 == .writable })
        recorder.stop()
        receptionist.cancel()
    }

    // MARK: - 1: the bound counts what the stages keep

    /// What the stages of a flow-controlled pipeline keep and what waits past its intake.
    private func heldPastIntake(_ receptionist: Receptionist<Int>) -> (inStages: Int, total: Int) {
        guard let gate = receptionist.stagedPipeline?.intake.gate else { return (0, 0) }
        let intake = receptionist.stagedPipeline!.intake.statistics
        return (gate.stagesHeld.load(ordering: .relaxed), gate.heldPastIntake + intake.pending + intake.inFlight)
    }

    /// A 30 s `batch(every:)` behind `high` 64 or `.waiting(capacity: 64)`, a producer that pauses
    /// (or waits) whenever told: the batch never holds more than the bound, and the whole pipeline
    /// never more than twice it (d9400bb: all 200 000 elements sat in the batch). The batch's timer
    /// is what frees the room, so it must not wait behind the gate.
    @Test(arguments: [false, true])
    func aTimeWindowBatchHoldsNoMoreThanTheBound(waiting: Bool) {
        let clock = ManualScheduler()
        let delivered = Recorder<[Int]>()
        let queue = DispatchQueue(label: "FlowControlContractTests.batch")
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(every: .seconds(30), scheduler: clock)
            .deliver(on: queue, buffering: waiting ? .waiting(capacity: 64) : .watermarks(low: 8, high: 64)) {
                delivered.append($0)
            }
        let total = 2_000
        let producerDone = DispatchSemaphore(value: 0)
        let pauses = AtomicValue<Int>(0)
        Thread {
            for value in 0..<total {
                if receptionist.send(value).shouldPause {
                    pauses.add(1, ordering: .relaxed)
                    let resume = DispatchSemaphore(value: 0)
                    receptionist.whenWritable(on: .immediate) { _ in resume.signal() }
                    resume.wait()
                }
            }
            producerDone.signal()
        }.start()
        var maxInStages = 0
        var maxTotal = 0
        var rounds = 0
        while producerDone.wait(timeout: .now() + 0.01) == .timedOut {
            // Wait for the producer to stop (paused or waiting), then look and let time pass.
            let before = receptionist.statistics.received + (receptionist.intakeStatistics?.received ?? 0)
            _ = waitUntil(seconds: 2) {
                let now = receptionist.statistics.received + (receptionist.intakeStatistics?.received ?? 0)
                return now == before && (waiting || !receptionist.isWritable)
            }
            let held = heldPastIntake(receptionist)
            maxInStages = max(maxInStages, held.inStages)
            maxTotal = max(maxTotal, held.total)
            clock.advance(by: .seconds(30))
            rounds += 1
            if rounds > 10_000 { break }
        }
        receptionist.finish()
        #expect(waitUntil(seconds: 60) { receptionist.isFinished })
        #expect(delivered.values.flatMap { $0 } == Array(0..<total), "nothing lost, in order")
        #expect(maxInStages <= 64, "held in the batch: \(maxInStages)")
        // Twice the bound, plus what the count above cannot tell from elements: the intake's timer
        // markers (`.urgent` events) and the element in the stages' hands, counted on both sides.
        #expect(maxTotal <= 128 + 4, "held in all: \(maxTotal)")
        let paused = pauses.load(ordering: .relaxed)
        if !waiting { #expect(paused > 0) }
    }

    // MARK: - 5: an end is not a resume

    /// A persistent handler hears the current state, then each change, in order, never the same
    /// twice in a row, and the end last; `isWritable` is false once ended.
    @Test func aListenerHearsEveryChangeInOrderAndTheEndLast() {
        let target = ManualTarget()
        let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 1, high: 3), drainBudget: 1) { _ in
        }
        let heard = Recorder<Writability>()
        receptionist.onWritabilityChange(on: .immediate) { heard.append($0) }
        #expect(heard.values == [.writable], "the current state first")
        for value in 0..<3 { _ = receptionist.send(value) }
        #expect(heard.values == [.writable, .paused])
        _ = target.runNext()  // 2 left
        #expect(heard.values == [.writable, .paused])
        _ = target.runNext()  // 1 left: at low
        #expect(heard.values == [.writable, .paused, .writable])
        for value in 3..<6 { _ = receptionist.send(value) }
        #expect(heard.values == [.writable, .paused, .writable, .paused])
        receptionist.cancel()
        #expect(heard.values == [.writable, .paused, .writable, .paused, .ended(.cancelled)])
        #expect(receptionist.writability == .ended(.cancelled))
        #expect(!receptionist.isWritable, "not writable once ended")
        let late = Recorder<Writability>()
        receptionist.onWritabilityChange(on: .immediate) { late.append($0) }
        #expect(late.values == [.ended(.cancelled)], "registered after the end: told so, once")
        target.runAll()
    }

    /// The one-shot block is told whether it ran for a resume or for an end.
    @Test func whenWritableTellsAnEndFromAResume() {
        let target = ManualTarget()
        let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 0, high: 1)) { _ in }
        #expect(receptionist.send(0).shouldPause)
        let told = Recorder<Writability>()
        receptionist.whenWritable(on: .immediate) { told.append($0) }
        receptionist.finish()
        #expect(told.values == [.ended(.finished)], "at the finish call, not once delivered")
        #expect(receptionist.writability == .ended(.finished))
        target.runAll()
        #expect(receptionist.isFinished)
    }

    /// Releasing a paused receptionist ends it: a listener hears `.ended(.cancelled)`.
    @Test func releasingAReceptionistEndsItsListeners() {
        let target = ManualTarget()
        let heard = Recorder<Writability>()
        var receptionist: Receptionist<Int>? = Receptionist<Int>(on: target, buffering: .watermarks(low: 0, high: 1)) {
            _ in
        }
        receptionist!.onWritabilityChange(on: .immediate) { heard.append($0) }
        _ = receptionist!.send(0)
        receptionist = nil
        #expect(heard.values == [.writable, .paused, .ended(.cancelled)])
        target.runAll()
    }

    /// An observation's writers and a hub's posters hear the same states through the token and
    /// the subscription (neither had a test before).
    @Test func observationTokensAndSubscriptionsTellTheirWritersToPause() {
        let target = ManualTarget()
        let box = ObservableValue(0)
        let token = box.receptionist().deliver(on: target, buffering: .watermarks(low: 0, high: 2)) { _ in }
        let heard = Recorder<Writability>()
        token.onWritabilityChange(on: .immediate) { heard.append($0) }
        box.value = 1
        #expect(token.isWritable)
        box.value = 2
        #expect(token.writability == .paused)
        target.runAll()
        #expect(token.writability == .writable)
        token.cancel()
        #expect(heard.values == [.writable, .paused, .writable, .ended(.cancelled)])

        let hub = Hub()
        let channel = Hub.Channel<Int>("FlowControlContractTests")
        let subscription = hub.pipeline(for: channel).deliver(on: target, buffering: .watermarks(low: 0, high: 2)) {
            _ in
        }
        let posted = Recorder<Writability>()
        subscription.onWritabilityChange(on: .immediate) { posted.append($0) }
        _ = hub.post(channel, 1)
        _ = hub.post(channel, 2)
        #expect(!subscription.isWritable)
        target.runAll()
        subscription.cancel()
        #expect(posted.values == [.writable, .paused, .writable, .ended(.cancelled)])
    }

    // MARK: - 4 and 6: async producers

    /// `sendSuspending` under watermarks keeps the element and suspends while paused; it returns
    /// once the backlog is down to `low`.
    @Test func sendSuspendingWaitsForTheLowWatermark() async {
        let target = ManualTarget()
        let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 0, high: 2)) { _ in }
        #expect(await receptionist.sendSuspending(0) == .accepted)
        let finished = AtomicValue<Bool>(false)
        let task = Task {
            let result = await receptionist.sendSuspending(1)
            finished.store(true, ordering: .releasing)
            return result
        }
        // The task is suspended once its block waits in the machine.
        #expect(await waitUntilAsync(seconds: 60) { receptionist.writableCallbackCount == 1 })
        let finishedEarly = finished.load(ordering: .acquiring)
        #expect(!finishedEarly)
        #expect(receptionist.statistics.received == 2, "the element was kept")
        target.runAll()
        #expect(await task.value == .acceptedAboveHighWatermark)
        let finishedLate = finished.load(ordering: .acquiring)
        #expect(finishedLate)
    }

    /// A cancelled task stops waiting; the element it sent is kept.
    @Test func aCancelledTaskStopsWaitingForWritability() async {
        let target = ManualTarget()
        let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 0, high: 1)) { _ in }
        let task = Task { await receptionist.sendSuspending(0) }
        #expect(await waitUntilAsync(seconds: 60) { receptionist.writableCallbackCount == 1 })
        task.cancel()
        #expect(await task.value == .acceptedAboveHighWatermark)
        #expect(receptionist.statistics.received == 1)
        target.runAll()
    }

    /// `writabilityChanges` is the listener as an asynchronous sequence, ending after the end.
    @Test func writabilityChangesEndAfterTheEnd() async {
        let target = ManualTarget()
        let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 0, high: 1)) { _ in }
        let collected = Task {
            var states: [Writability] = []
            for await state in receptionist.writabilityChanges { states.append(state) }
            return states
        }
        #expect(await waitUntilAsync(seconds: 60) { receptionist.listenerCount == 1 })
        _ = receptionist.send(0)
        target.runAll()
        receptionist.cancel()
        #expect(await collected.value == [.writable, .paused, .writable, .ended(.cancelled)])
    }
}
