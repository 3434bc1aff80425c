import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Learning that a delivery ended: `finish(completion:)`, `finishAndWait()`, and finishing a
/// sequence of values.
@Suite struct CompletionTests {
    @Test func theCompletionRunsOnceEverythingWasDeliveredAndTheBlockReleased() {
        let target = ManualTarget()
        let lifetimes = LifetimeCounter()
        let order = Recorder<String>()
        let receptionist = {
            let witness = LifetimeWitness(lifetimes)
            return Receptionist<Int>(on: target) { value in
                witness.touch()
                order.append("delivered \(value)")
            }
        }()
        receptionist.send(1)
        receptionist.send(2)
        receptionist.finish {
            order.append("completed, block released: \(lifetimes.deinitialized == 1)")
        }
        #expect(order.values.isEmpty, "nothing delivered yet: the completion waits")
        target.runAll()
        #expect(order.values == ["delivered 1", "delivered 2", "completed, block released: true"])
        #expect(receptionist.isFinished)
        let late = Recorder<Int>()
        receptionist.finish { late.append(1) }
        #expect(late.values == [1], "on an ended receptionist the completion runs at once")
    }

    @Test func cancelRunsTheCompletionToo() {
        let target = ManualTarget()
        let receptionist = Receptionist<Int>(on: target) { _ in }
        receptionist.send(1)
        let completed = Recorder<Bool>()
        receptionist.finish { completed.append(receptionist.isCancelled) }
        #expect(completed.values.isEmpty)
        receptionist.cancel()  // the finish had not taken effect: a drain was pending
        target.runAll()
        #expect(completed.count == 1, "a finishing receptionist cancelled: the completion still runs once")
    }

    @Test func finishAndWaitReturnsAfterTheLastTaskBlock() async {
        let queue = DispatchQueue(label: "CompletionTests.queue")
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: queue) { seen.append($0) }
        for value in 0..<1_000 { receptionist.send(value) }
        await receptionist.finishAndWait()
        #expect(seen.values == Array(0..<1_000))
        #expect(receptionist.isFinished)
    }

    @Test func aPipelineCompletesAfterItsStagesHandedOnWhatTheyHeld() async {
        let seen = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self).batch(count: 10)
            .deliver(on: DispatchQueue(label: "CompletionTests.batches")) { seen.append($0) }
        for value in 0..<15 { receptionist.send(value) }
        await receptionist.finishAndWait()
        #expect(seen.values == [Array(0..<10), Array(10..<15)])
    }

    @Test func observationsAndSubscriptionsComplete() async {
        let box = ObservableValue(0)
        let seen = Recorder<Int>()
        let token = box.receptionist().throttle(for: .seconds(3600), latest: true)
            .deliver(on: DispatchQueue(label: "CompletionTests.observation")) { seen.append($0.newValue) }
        for value in 1...5 { box.value = value }
        await token.finishAndWait()
        #expect(seen.values == [1, 5], "the held value was handed on before the completion")
        #expect(token.isFinished)

        let hub = Hub()
        let payloads = Recorder<Int>()
        let subscription = hub.subscribe(to: .numbers, on: DispatchQueue(label: "CompletionTests.hub")) {
            payloads.append($0)
        }
        for value in 0..<100 { hub.post(.numbers, value) }
        await subscription.finishAndWait()
        #expect(payloads.values == Array(0..<100))
        #expect(hub.post(.numbers, 100) == 0, "a finished subscription takes no more posts")
    }

    @Test func finishingValuesHandsOnAPartialBatchAndEndsTheSequence() async {
        let box = ObservableValue(0)
        let batches = box.receptionist().map(\.newValue).batch(count: 100).values()
        for value in 1...3 { box.value = value }
        let consumer = Task { await batches.collected() }
        batches.finish()
        #expect(await consumer.value == [[1, 2, 3]])
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).batch(count: 100).values()
        receptionist.send(7)
        values.finish()
        #expect(await values.collected() == [[7]])
    }
}
