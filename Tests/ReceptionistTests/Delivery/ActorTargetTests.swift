import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// State kept in an actor: what the task blocks saw, appended synchronously (they are isolated).
private actor Store {
    var values: [Int] = []
    var batches: [[Int]] = []
    var running = 0
    var overlaps = 0

    func append(_ value: Int) {
        running += 1
        if running != 1 { overlaps += 1 }
        values.append(value)
        running -= 1
    }
}

/// Any actor as a target: the task block is isolated to it, outputs arrive in order, one hop
/// per burst.
@Suite struct ActorTargetTests {
    @Test func aReceptionistDeliversInOrderIsolatedToTheActor() async {
        let store = Store()
        let receptionist = Receptionist<Int>(on: store) { store, value in store.append(value) }
        for value in 0..<1_000 { receptionist.send(value) }
        await withCheckedContinuation { continuation in
            receptionist.send(-1)  // the last one resumes the test
            Task {
                while await store.values.last != -1 { await Task.yield() }
                continuation.resume()
            }
        }
        #expect(await store.values == Array(0..<1_000) + [-1])
        #expect(await store.overlaps == 0)
    }

    @Test func aPipelineDeliversBatchesToTheActorAndFinishes() async {
        let store = Store()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 10)
            .deliver(on: store) { store, batch in store.batches.append(batch) }
        for value in 0..<25 { receptionist.send(value) }
        receptionist.finish()
        #expect(await waitUntilAsync(seconds: 240) { receptionist.isFinished })
        #expect(await store.batches == [Array(0..<10), Array(10..<20), Array(20..<25)])
    }

    @Test func aBurstIsOneHop() async {
        let store = Store()
        let gate = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: store) { store, value in
            if value == 0 { gate.wait() }  // holds the first drain while the burst accumulates
            store.append(value)
        }
        // From a thread of its own, so that the drain blocked above holds no thread the sender needs.
        await withCheckedContinuation { continuation in
            Thread {
                receptionist.send(0)
                for value in 1..<500 { receptionist.send(value) }
                gate.signal()
                receptionist.finish()
                continuation.resume()
            }.start()
        }
        #expect(await waitUntilAsync(seconds: 240) { receptionist.isFinished })
        #expect(await store.values == Array(0..<500))
        let statistics = receptionist.statistics
        // While the first drain was held, the rest of the burst (all but the at most 256 that
        // drain took) waited in the buffer for the next drain: not one task per change.
        #expect(statistics.delivered == 500)
        #expect(statistics.maxPending >= 500 - 256)
    }

    @Test func nothingIsDeliveredAfterCancelReturns() async {
        let store = Store()
        let cancelled = AtomicValue<Bool>(false)
        let late = AtomicValue<Int>(0)
        let receptionist = Receptionist<Int>(on: store) { store, value in
            if cancelled.load(ordering: .acquiring) { late.add(1, ordering: .relaxed) }
            store.append(value)
        }
        for value in 0..<10_000 { receptionist.send(value) }
        receptionist.cancel()
        cancelled.store(true, ordering: .releasing)
        // One drain may have started its block before cancel returned; none after it.
        #expect(await waitUntilAsync(seconds: 240) { receptionist.statistics.inFlight == 0 })
        #expect(late.load(ordering: .relaxed) <= 1)
        #expect(receptionist.isCancelled)
        let values = await store.values
        #expect(values == Array(0..<values.count), "whatever arrived, arrived in order")
    }

    @Test func anObservationAndAHubSubscriptionOnAnActor() async {
        let store = Store()
        let box = ObservableValue(0)
        let token = box.receptionist().deliver(on: store) { store, change in store.append(change.newValue) }
        let hub = Hub()
        let subscription = hub.subscribe(to: .numbers, on: store) { store, value in store.append(value * 100) }
        for value in 1...3 { box.value = value }
        token.finish()
        #expect(await waitUntilAsync(seconds: 240) { token.isFinished })
        hub.post(.numbers, 7)
        subscription.finish()
        #expect(await waitUntilAsync(seconds: 240) { subscription.isFinished })
        #expect(await store.values == [1, 2, 3, 700])
    }
}
