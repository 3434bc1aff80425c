import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Subscriptions: cancelling, releasing, what the hub keeps alive, statistics, hashing.
@Suite struct SubscriptionTests {
    let hub = Hub()

    @Test func releasingTheSubscriptionUnsubscribesAndReleasesTheBlock() {
        let counter = LifetimeCounter()
        let seen = Recorder<Int>()
        var subscription: Hub.Subscription? = {
            let witness = LifetimeWitness(counter)
            return hub.subscribe(to: .numbers, on: .immediate) { value in
                witness.touch()
                seen.append(value)
            }
        }()
        #expect(hub.post(.numbers, 1) == 1)
        #expect(hub.subscriberCount(of: .numbers) == 1)
        #expect(counter.deinitialized == 0)
        _ = subscription
        subscription = nil
        #expect(counter.deinitialized == 1)
        #expect(hub.subscriberCount(of: .numbers) == 0)
        #expect(hub.post(.numbers, 2) == 0)
        #expect(seen.values == [1])
    }

    @Test func cancelIsIdempotentAndReleasesTheBlock() {
        let counter = LifetimeCounter()
        let subscription = {
            let witness = LifetimeWitness(counter)
            return hub.subscribe(to: .numbers, on: .immediate) { _ in witness.touch() }
        }()
        #expect(!subscription.isCancelled)
        subscription.cancel()
        #expect(subscription.isCancelled)
        #expect(counter.deinitialized == 1)
        #expect(hub.subscriberCount(of: .numbers) == 0)
        subscription.cancel()
        #expect(subscription.isCancelled)
        #expect(hub.post(.numbers, 1) == 0)
        #expect(subscription.statistics.received == 0)
    }

    @Test func finishDeliversWhatWasPostedThenEnds() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let counter = LifetimeCounter()
        var subscription: Hub.Subscription? = {
            let witness = LifetimeWitness(counter)
            return hub.subscribe(to: .numbers, on: target) { value in
                witness.touch()
                seen.append(value)
            }
        }()
        #expect(hub.post(.numbers, 1) == 1)
        #expect(hub.post(.numbers, 2) == 1)
        subscription!.finish()
        #expect(hub.subscriberCount(of: .numbers) == 0, "no post made after finish reaches it")
        #expect(hub.post(.numbers, 3) == 0)
        #expect(!subscription!.isFinished, "two posts still wait for the target")
        let finished = subscription!
        subscription = nil  // releasing a finishing subscription does not cancel it
        target.runAll()
        #expect(seen.values == [1, 2])
        #expect(finished.isFinished)
        #expect(!finished.isCancelled)
        #expect(counter.deinitialized == 1, "the block is released once everything was delivered")
        finished.cancel()
        #expect(!finished.isCancelled, "a cancel after finishing has no effect")
    }

    @Test func cancelDiscardsPostsNotYetDelivered() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let subscription = hub.subscribe(to: .numbers, on: target) { seen.append($0) }
        hub.post(.numbers, 1)
        #expect(target.runAll() == 1)
        #expect(hub.post(.numbers, 2) == 1)
        #expect(hub.post(.numbers, 3) == 1)
        subscription.cancel()
        target.runAll()
        #expect(seen.values == [1])
        let statistics = subscription.statistics
        #expect(statistics.received == 3)
        #expect(statistics.delivered == 1)
        #expect(statistics.discarded == 2)
    }

    @Test func statisticsCountWhatTheSubscriberGot() {
        let target = ManualTarget()
        let subscription = hub.subscribe(to: .numbers, on: target) { _ in }
        for value in 0..<3 { hub.post(.numbers, value) }
        #expect(subscription.statistics.received == 3)
        #expect(subscription.statistics.pending == 3)
        target.runAll()
        #expect(subscription.statistics.delivered == 3)
        #expect(subscription.statistics.pending == 0)
        subscription.cancel()
    }

    @Test func nothingIsDeliveredAfterCancelReturns() {
        let queue = DispatchQueue(label: "hub.cancel")
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        let counter = LifetimeCounter()
        let seen = Recorder<Int>()
        let cancelReturned = AtomicValue<Bool>(false)
        let lateCalls = AtomicValue<Int>(0)
        let subscription = {
            let witness = LifetimeWitness(counter)
            return hub.subscribe(to: .numbers, on: queue) { value in
                witness.touch()
                if cancelReturned.load(ordering: .acquiring) { lateCalls.add(1, ordering: .relaxed) }
                seen.append(value)
                if value == 0 {
                    entered.signal()
                    _ = wait(release)
                }
            }
        }()
        for value in 0..<10 { hub.post(.numbers, value) }
        #expect(wait(entered))
        subscription.cancel()  // while the block runs on the queue
        cancelReturned.store(true, ordering: .releasing)
        #expect(counter.deinitialized == 0)  // the running delivery still holds the block
        release.signal()
        drainQueue(queue)
        #expect(seen.values == [0])
        #expect(lateCalls.load(ordering: .relaxed) == 0)
        #expect(waitUntil(seconds: 60) { counter.deinitialized == 1 })
        #expect(subscription.statistics.discarded == 9)
        #expect(hub.post(.numbers, 10) == 0)
    }

    @Test func aSubscriberMayCancelItselfFromItsBlock() {
        let seen = Recorder<Int>()
        let box = Locked<Hub.Subscription?>(uncounted: nil)
        let subscription = hub.subscribe(to: .numbers, on: .immediate) { value in
            seen.append(value)
            if value == 2 { box.withLock { $0 }?.cancel() }
        }
        box.withLock { $0 = subscription }
        let reached = (0..<5).map { hub.post(.numbers, $0) }
        #expect(reached == [1, 1, 1, 0, 0])
        #expect(seen.values == [0, 1, 2])
        #expect(subscription.isCancelled)
        #expect(hub.subscriberCount(of: .numbers) == 0)
        box.withLock { $0 = nil }
    }

    final class Radar: Sendable {
        let witness: LifetimeWitness
        let seen = Recorder<Int>()
        let subscription = Locked<Hub.Subscription?>(uncounted: nil)

        init(hub: Hub, counter: LifetimeCounter) {
            witness = LifetimeWitness(counter)
            let subscription = hub.subscribe(to: .numbers, on: .immediate) { [weak self] value in
                self?.seen.append(value)
            }
            self.subscription.withLock { $0 = subscription }
        }
    }

    @Test func theHubDoesNotKeepASubscribersOwnerAlive() {
        let counter = LifetimeCounter()
        var radar: Radar? = Radar(hub: hub, counter: counter)
        #expect(hub.post(.numbers, 1) == 1)
        #expect(radar?.seen.values == [1])
        radar = nil
        #expect(counter.deinitialized == 1)  // and its deinit released the subscription
        #expect(hub.subscriberCount(of: .numbers) == 0)
        #expect(hub.post(.numbers, 2) == 0)
    }

    @Test func aSubscriptionDoesNotKeepItsHubAlive() {
        var hub: Hub? = Hub()
        weak let weakHub = hub
        let seen = Recorder<Int>()
        let subscription = hub!.subscribe(to: .numbers, on: .immediate) { seen.append($0) }
        #expect(hub!.post(.numbers, 1) == 1)
        hub = nil
        #expect(weakHub == nil)
        #expect(!subscription.isCancelled)
        subscription.cancel()
        #expect(subscription.isCancelled)
        #expect(seen.values == [1])
    }

    @Test func subscriptionsStoreInASetOfHandlesWithOtherKinds() {
        var handles = Set<AnyDeliveryHandle>()
        let a = hub.subscribe(to: .numbers, on: .immediate) { _ in }
        let b = hub.subscribe(to: .numbers, on: .immediate) { _ in }
        a.store(in: &handles)
        b.store(in: &handles)
        a.store(in: &handles)
        #expect(handles.count == 2)
        #expect(AnyDeliveryHandle(a) == AnyDeliveryHandle(a))
        #expect(AnyDeliveryHandle(a) != AnyDeliveryHandle(b))
        #expect(handles.contains(AnyDeliveryHandle(a)) && handles.contains(AnyDeliveryHandle(b)))
        a.cancel()
        b.cancel()

        var owned = Set<AnyDeliveryHandle>()
        hub.subscribe(to: .numbers, on: .immediate) { _ in }.store(in: &owned)
        hub.subscribe(to: .numbers, on: .immediate) { _ in }.store(in: &owned)
        let box = ObservableValue(0)
        box.receptionist().deliver(on: .immediate) { _ in }.store(in: &owned)
        Receptionist<Int>(on: .immediate) { _ in }.store(in: &owned)
        #expect(owned.count == 4)
        #expect(hub.post(.numbers, 1) == 2)
        #expect(box.observerCount == 1)
        owned.removeAll()
        #expect(hub.subscriberCount(of: .numbers) == 0)
        #expect(box.observerCount == 0, "releasing the set cancels every kind of handle")
    }
}
