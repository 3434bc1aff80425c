import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// `.waiting(capacity:)`: senders wait for room instead of growing the buffer or dropping.
@Suite struct WaitingPolicyTests {
    @Test func aThreadThatSendsIntoAFullBufferWaitsForRoomAndNothingIsLost() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target, buffering: .waiting(capacity: 4)) { seen.append($0) }
        let sent = AtomicValue<Int>(0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            for value in 0..<10 {
                if receptionist.send(value).isAccepted { sent.add(1, ordering: .releasing) }
            }
            done.signal()
        }.start()
        #expect(waitUntil { receptionist.statistics.waits == 1 }, "the fifth send waits")
        #expect(sent.load(ordering: .acquiring) == 4)
        #expect(receptionist.statistics.pending == 4)
        while done.wait(timeout: .now()) == .timedOut {
            target.runAll()  // each drain makes room, which wakes the sender
        }
        target.runAll()
        #expect(seen.values == Array(0..<10))
        let statistics = receptionist.statistics
        #expect(statistics.maxPending <= 4, "the buffer never held more than its capacity")
        #expect(statistics.received == 10 && statistics.dropped == 0 && statistics.waits >= 1)
    }

    @Test func aTaskSuspendsInsteadOfBlocking() async {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target, buffering: .waiting(capacity: 2)) { seen.append($0) }
        let producer = Task {
            for value in 0..<6 { await receptionist.sendSuspending(value) }
        }
        while !(await Task { () -> Bool in
            target.runAll()
            return seen.count == 6
        }.value) {
            await Task.yield()
        }
        await producer.value
        #expect(seen.values == Array(0..<6))
        #expect(receptionist.statistics.maxPending <= 2)
    }

    @Test func aSendFromTheReceptionistsOwnTaskBlockIsRefusedRatherThanDeadlocking() {
        let queue = DispatchQueue(label: "WaitingPolicyTests.self")
        let refused = Recorder<Int>()
        let holder = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 1)) { value in
            guard value == 0, let receptionist = holder.withLock({ $0 }) else { return }
            receptionist.send(1)  // fills the buffer
            if !receptionist.send(2).isAccepted { refused.append(2) }  // would wait for this very drain
        }
        holder.withLock { $0 = receptionist }
        receptionist.send(0)
        receptionist.finish()
        #expect(waitUntil { receptionist.isFinished })
        #expect(refused.values == [2])
        holder.withLock { $0 = nil }
    }

    @Test func aSendFromTheTargetQueueIsRefusedRatherThanDeadlocking() {
        let queue = DispatchQueue(label: "WaitingPolicyTests.queue")
        let receptionist = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 1)) { _ in }
        let results = Recorder<Bool>()
        queue.sync {
            // The drain cannot run while this block holds the queue.
            results.append(receptionist.send(0).isAccepted)
            results.append(receptionist.send(1).isAccepted)
        }
        receptionist.finish()
        #expect(waitUntil { receptionist.isFinished })
        #expect(results.values == [true, false])
    }

    @Test func cancelAndFinishReleaseBlockedSenders() {
        for stop in ["cancel", "finish"] {
            let target = ManualTarget()
            let receptionist = Receptionist<Int>(on: target, buffering: .waiting(capacity: 1)) { _ in }
            receptionist.send(0)
            let result = Recorder<Bool>()
            Thread { result.append(receptionist.send(1).isAccepted) }.start()
            #expect(waitUntil { receptionist.statistics.waits == 1 })
            if stop == "cancel" { receptionist.cancel() } else { receptionist.finish() }
            #expect(waitUntil { result.count == 1 }, "\(stop) wakes the waiting sender")
            #expect(result.values == [false], "its event was not accepted: \(stop)")
            target.runAll()
        }
    }

    @Test(.exitTest) func anObservationCannotWait() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ObservableValue(0).receptionist().deliver(on: DispatchQueue.main, buffering: .waiting(capacity: 4)) {
                _ in
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            message.contains("deliver(on:buffering:) policy .waiting(capacity:) applies to receptionists you send to"))
    }

    @Test(.exitTest) func aCapacityBelowOneIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = BufferPolicy.waiting(capacity: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("BufferPolicy.waiting(capacity:): capacity must be at least 1, got 0"))
    }
}

/// `sendSuspending` and task cancellation: cancelling ends the wait, and the event is not sent.
extension WaitingPolicyTests {
    @Test func cancellingASuspendedSendEndsTheWaitWithoutSending() async {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target, buffering: .waiting(capacity: 1)) { seen.append($0) }
        #expect(await receptionist.sendSuspending(1).isAccepted)
        let waiting = Task { await receptionist.sendSuspending(2) }
        #expect(await waitUntilAsync { receptionist.statistics.waits == 1 }, "the second send waits")
        waiting.cancel()
        #expect(await waiting.value == .refused(.taskCancelled), "a cancelled wait is refused")
        // The receptionist goes on: the buffer still holds 1, and a new send waits for room again.
        target.runAll()
        #expect(await receptionist.sendSuspending(3).isAccepted)
        target.runAll()
        #expect(seen.values == [1, 3], "the cancelled event was never sent")
        let statistics = receptionist.statistics
        #expect(statistics.received == 2 && statistics.dropped == 0 && statistics.delivered == 2)
    }

    @Test func anAlreadyCancelledTaskSendsIfThereIsRoomAndDoesNotWaitOtherwise() async {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target, buffering: .waiting(capacity: 1)) { seen.append($0) }
        let results = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let first = await receptionist.sendSuspending(1)  // room: sent
            let second = await receptionist.sendSuspending(2)  // full: not sent, no wait
            return (first, second)
        }.value
        #expect(results == (.accepted, .refused(.taskCancelled)))
        #expect(receptionist.statistics.waits == 0)
        target.runAll()
        #expect(seen.values == [1])
    }

    @Test func cancellationRacingWithRoomNeverLosesOrDuplicatesAnEvent() async {
        // Many waiting tasks, cancelled while drains make room: each event is either sent (its
        // send returned true) and delivered once, or not sent (false) and never delivered.
        for round in 0..<50 {
            let target = ManualTarget()
            let seen = Recorder<Int>()
            let receptionist = Receptionist<Int>(on: target, buffering: .waiting(capacity: 2)) { seen.append($0) }
            let senders = (0..<8).map { value in Task { (value, await receptionist.sendSuspending(value)) } }
            for (index, sender) in senders.enumerated() where (index + round) % 2 == 0 { sender.cancel() }
            // The consumer runs beside the senders until all returned: a sender that had not
            // started when the others filled the buffer must not wait for a drain nobody runs.
            let consumer = Task {
                while !Task.isCancelled {
                    target.runAll()
                    await Task.yield()
                }
            }
            var results: [(Int, SendResult)] = []
            for sender in senders { results.append(await sender.value) }
            consumer.cancel()
            await consumer.value
            target.runAll()
            let sent = results.filter(\.1.isAccepted).map(\.0).sorted()
            #expect(seen.values.sorted() == sent, "round \(round): delivered exactly what was sent")
            #expect(receptionist.statistics.delivered == sent.count)
        }
    }
}

/// Waking waiting senders: once the buffer drained to half its capacity, one per drain step
/// (the longest waiting first), and every one left when the buffer is empty; never one per freed
/// slot.
@Suite struct WaitingHysteresisTests {
    @Test func waitingSendersAreWokenOnePerStepOnceTheBufferIsDownToHalfItsCapacity() {
        var machine = ReceptionistStateMachine<Int>(policy: .waiting(capacity: 8)) { _ in }
        for value in 0..<8 { _ = machine.enqueue(value) }
        let full = machine.enqueue(8).action
        #expect(full == .full)
        for _ in 0..<3 {
            let waits = machine.wait(.thread(DispatchSemaphore(value: 0)))
            #expect(waits)
        }
        var chunk: [Int] = []
        var woken: [Int] = []
        for _ in 0..<8 {
            machine.nextChunk(into: &chunk, maxCount: 1)
            woken.append(machine.waitersToWake().count)
        }
        // 7, 6, 5 left: nobody; 4, 3, 2 left (at or below half of 8): one each; then nobody is
        // left waiting.
        #expect(woken == [0, 0, 0, 1, 1, 1, 0, 0])
        #expect(chunk == Array(0..<8))
    }

    /// In front of a waiting pipeline's stages (the intake, behind which the gate keeps outputs
    /// for the task block), senders are woken only once the whole capacity is free.
    @Test func anIntakeWakesItsSendersOnlyOnceEmpty() {
        var machine = ReceptionistStateMachine<Int>(policy: .waiting(capacity: 8)) { _ in }
        machine.wakesSendersWhenEmpty()
        for value in 0..<8 { _ = machine.enqueue(value) }
        for _ in 0..<3 {
            let waits = machine.wait(.thread(DispatchSemaphore(value: 0)))
            #expect(waits)
        }
        var chunk: [Int] = []
        var woken: [Int] = []
        for _ in 0..<8 {
            machine.nextChunk(into: &chunk, maxCount: 1)
            woken.append(machine.waitersToWake().count)
        }
        #expect(woken == [0, 0, 0, 0, 0, 0, 0, 3])
    }

    @Test func theStepThatEmptiesTheBufferWakesEveryoneLeft() {
        var machine = ReceptionistStateMachine<Int>(policy: .waiting(capacity: 8)) { _ in }
        for value in 0..<8 { _ = machine.enqueue(value) }
        for _ in 0..<5 {
            let waits = machine.wait(.thread(DispatchSemaphore(value: 0)))
            #expect(waits)
        }
        var chunk: [Int] = []
        var woken: [Int] = []
        for maxCount in [4, 2, 2] {
            machine.nextChunk(into: &chunk, maxCount: maxCount)
            woken.append(machine.waitersToWake().count)
        }
        // 4 left: one; 2 left: one; empty: the three still waiting, since no later step of this
        // drain would wake them.
        #expect(woken == [1, 1, 3])
    }

    @Test func aSegmentThatEmptiesTheBufferWakesEveryone() {
        var machine = ReceptionistStateMachine<Int>(policy: .waiting(capacity: 1)) { _ in }
        _ = machine.enqueue(0)
        for _ in 0..<4 {
            let waits = machine.wait(.thread(DispatchSemaphore(value: 0)))
            #expect(waits)
        }
        var chunk: [Int] = []
        machine.nextChunk(into: &chunk, maxCount: 256)
        #expect(machine.waitersToWake().count == 4, "capacity 1: the low-water mark is an empty buffer")
    }

    @Test func finishingWakesEveryWaiterWhateverTheFill() {
        var machine = ReceptionistStateMachine<Int>(policy: .waiting(capacity: 4)) { _ in }
        for value in 0..<4 { _ = machine.enqueue(value) }
        for _ in 0..<2 {
            let waits = machine.wait(.thread(DispatchSemaphore(value: 0)))
            #expect(waits)
        }
        _ = machine.finish()
        #expect(machine.waitersToWake().count == 2)
    }

    /// Many producers into a small buffer with a consumer that keeps up: the producers wait far
    /// less often than once per change (each wake-up lets a producer send several changes).
    @Test func producersWaitInGroupsNotOncePerChange() {
        let queue = DispatchQueue(label: "hysteresis.consumer")
        let received = AtomicValue<Int>(0)
        let receptionist = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 64)) { _ in
            received.add(1, ordering: .relaxed)
        }
        let perProducer = scaled(20_000)
        onThreads(8) { producer in
            for sequence in 0..<perProducer { receptionist.send(stamp(producer, sequence)) }
        }
        receptionist.finish()
        #expect(waitUntil { receptionist.isFinished })
        let statistics = receptionist.statistics
        #expect(received.load(ordering: .relaxed) == 8 * perProducer)
        #expect(statistics.maxPending <= 64)
        #expect(
            statistics.waits * 4 <= 8 * perProducer,
            "\(statistics.waits) waits for \(8 * perProducer) changes: at most one per 4 changes")
    }
}

/// ``DrainGate``: the park / resume protocol between a waiting pipeline's intake and its delivery.
@Suite struct DrainGateTests {
    @Test func theIntakeParksAtTheCapacityAndIsResumedAtHalfOfIt() {
        let gate = DrainGate(capacity: 4)
        let resumed = AtomicValue<Int>(0)
        let resume: @Sendable () -> Void = { resumed.add(1, ordering: .relaxed) }
        for _ in 0..<4 {
            gate.inputTaken()
            #expect(gate.weigh() == 1)
        }
        #expect(gate.room == 0)
        #expect(gate.park(resuming: resume), "no room: the drain stops")
        gate.handedOver(1)  // 3 outstanding: above half
        #expect(resumed.load(ordering: .relaxed) == 0)
        gate.handedOver(1)  // 2: half the capacity
        #expect(resumed.load(ordering: .relaxed) == 1, "resumed once")
        gate.handedOver(1)
        gate.handedOver(1)
        #expect(resumed.load(ordering: .relaxed) == 1, "and only once")
        #expect(gate.room == 4)
    }

    @Test func anOutputWeighsTheInputsTakenSinceThePreviousOne() {
        let gate = DrainGate(capacity: 100)
        for _ in 0..<10 { gate.inputTaken() }
        #expect(gate.weigh() == 10, "a batch of ten")
        #expect(gate.weigh() == 0, "a second output for the same inputs (a flush through two stages)")
        #expect(gate.room == 90)
        gate.handedOver(10)
        #expect(gate.room == 100)
    }

    @Test func aDrainThatFindsRoomBackWhileParkingGoesOn() {
        let gate = DrainGate(capacity: 2)
        let resumed = AtomicValue<Int>(0)
        let resume: @Sendable () -> Void = { resumed.add(1, ordering: .relaxed) }
        for _ in 0..<2 {
            gate.inputTaken()
            _ = gate.weigh()
        }
        // The delivery hands both over before the drain parks: nobody is parked to resume.
        gate.handedOver(1)
        gate.handedOver(1)
        #expect(!gate.park(resuming: resume), "room is back: the drain goes on itself")
        #expect(resumed.load(ordering: .relaxed) == 0)
    }

    /// The race itself: a drain parks while the delivery hands outputs over, many times. Every
    /// park ends with exactly one continuation: the drain going on itself, or one resume.
    @Test func everyParkEndsWithExactlyOneContinuation() {
        let rounds = scaled(5_000)
        let gate = DrainGate(capacity: 2)
        let resumed = AtomicValue<Int>(0)
        let resume: @Sendable () -> Void = { resumed.add(1, ordering: .relaxed) }
        var stopped = 0
        for _ in 0..<rounds {
            for _ in 0..<2 {
                gate.inputTaken()
                _ = gate.weigh()
            }
            let before = resumed.load(ordering: .relaxed)
            let handedOver = DispatchSemaphore(value: 0)
            Thread {
                gate.handedOver(1)
                gate.handedOver(1)
                handedOver.signal()
            }.start()
            let stops = gate.park(resuming: resume)
            handedOver.wait()
            let resumes = resumed.load(ordering: .relaxed) - before
            // A drain that stopped is resumed exactly once; one that went on is not resumed.
            #expect(resumes == (stops ? 1 : 0), "parked: \(stops), resumed \(resumes) times")
            if stops { stopped += 1 }
        }
        #expect(resumed.load(ordering: .relaxed) == stopped)
    }
}

extension DrainGateTests {
    /// What resumes a parked drain holds the intake; it is let go once used, once the drain
    /// unparks itself, and when the pipeline is cancelled.
    @Test func whatResumesAParkedDrainIsLetGoOnceItCannotRunAnyMore() {
        let counter = LifetimeCounter()
        let gate = DrainGate(capacity: 2)
        func fill() {
            for _ in 0..<2 {
                gate.inputTaken()
                _ = gate.weigh()
            }
        }
        func parking() -> Bool {
            let witness = LifetimeWitness(counter)
            return gate.park(resuming: { witness.touch() })
        }
        fill()
        #expect(parking())
        #expect(counter.deinitialized == 0, "held while parked")
        gate.handedOver(2)
        #expect(counter.deinitialized == 1, "let go once it ran")
        fill()
        gate.handedOver(2)
        #expect(!parking(), "room came back first: the drain goes on")
        #expect(counter.deinitialized == 2)
        fill()
        #expect(parking())
        gate.cancel()
        #expect(counter.deinitialized == 3, "let go on cancel")
        gate.handedOver(2)
    }
}
