import Dispatch
import Foundation
import Testing

@testable import Receptionist

struct HubTestEnemy: Sendable, Equatable {
    let id: Int
}

extension Hub.Channel where Payload == HubTestEnemy {
    static let enemyAdded = Hub.Channel<HubTestEnemy>("enemyAdded")
}

extension Hub.Channel where Payload == Int {
    static let numbers = Hub.Channel<Int>("numbers")
}

extension Hub.Channel where Payload == Void {
    static let levelReset = Hub.Channel<Void>("levelReset")
}

/// Posting: typed channels, what a post reaches, order, targets, sender filters, re-entrancy.
@Suite struct HubTests {
    let hub = Hub()

    // MARK: Typed channels

    @Test func aSubscriberGetsWhatIsPostedOnItsChannel() {
        let seen = Recorder<HubTestEnemy>()
        let subscription = hub.subscribe(to: .enemyAdded, on: .immediate) { seen.append($0) }
        #expect(hub.post(.enemyAdded, HubTestEnemy(id: 7)) == 1)
        #expect(seen.values == [HubTestEnemy(id: 7)])
        subscription.cancel()
    }

    @Test func theSameNameWithAnotherPayloadTypeIsAnotherChannel() {
        let ints = Recorder<Int>()
        let strings = Recorder<String>()
        let otherInts = Recorder<Int>()
        let intSubscription = hub.subscribe(to: Hub.Channel<Int>("value"), on: .immediate) { ints.append($0) }
        let stringSubscription = hub.subscribe(to: Hub.Channel<String>("value"), on: .immediate) { strings.append($0) }
        let otherSubscription = hub.subscribe(to: Hub.Channel<Int>("other"), on: .immediate) { otherInts.append($0) }
        #expect(hub.channelCount == 3)

        #expect(hub.post(Hub.Channel<Int>("value"), 1) == 1)
        #expect(hub.post(Hub.Channel<String>("value"), "one") == 1)
        #expect(hub.post(Hub.Channel<Double>("value"), 1.5) == 0)
        #expect(hub.post(Hub.Channel<Int>("other"), 2) == 1)

        #expect(ints.values == [1])
        #expect(strings.values == ["one"])
        #expect(otherInts.values == [2])
        #expect(Hub.Channel<Int>("value") == Hub.Channel<Int>("value"))
        #expect(Hub.Channel<Int>("value").name == "value")
        for subscription in [intSubscription, stringSubscription, otherSubscription] { subscription.cancel() }
        #expect(hub.channelCount == 0)
    }

    @Test(.exitTest) func anEmptyChannelNameIsRejectedWithAMessageNamingTheParameter() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Hub.Channel<Int>("")
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Hub.Channel(_:): name must not be empty"))
    }

    @Test func aChannelWithoutPayloadIsPostedWithoutOne() {
        let calls = AtomicValue<Int>(0)
        let subscription = hub.subscribe(to: .levelReset, on: .immediate) { calls.add(1, ordering: .relaxed) }
        #expect(hub.post(.levelReset) == 1)
        #expect(hub.post(.levelReset, ()) == 1)
        #expect(calls.load(ordering: .relaxed) == 2)
        subscription.cancel()
    }

    // MARK: What a post reaches

    @Test func postReturnsHowManySubscribersAcceptedIt() {
        let sender = LifetimeWitness(LifetimeCounter())
        #expect(hub.post(.numbers, 0) == 0)
        let a = hub.subscribe(to: .numbers, on: .immediate) { _ in }
        let b = hub.subscribe(to: .numbers, on: ManualTarget()) { _ in }
        let c = hub.subscribe(to: .numbers, from: sender, on: .immediate) { _ in }
        #expect(hub.post(.numbers, 1) == 2)
        #expect(hub.post(.numbers, 2, from: sender) == 3)
        b.cancel()
        #expect(hub.post(.numbers, 3, from: sender) == 2)
        #expect(hub.post(Hub.Channel<Int>("elsewhere"), 4) == 0)
        a.cancel()
        c.cancel()
        #expect(hub.post(.numbers, 5, from: sender) == 0)
    }

    @Test func theDefaultHubIsSharedAndEveryHubIsIndependent() {
        #expect(Hub.default === Hub.default)
        let channel = Hub.Channel<Int>("HubTests.default.\(UUID())")
        let onDefault = Recorder<Int>()
        let onOwn = Recorder<Int>()
        let a = Hub.default.subscribe(to: channel, on: .immediate) { onDefault.append($0) }
        let b = hub.subscribe(to: channel, on: .immediate) { onOwn.append($0) }
        #expect(Hub.default.post(channel, 1) == 1)
        #expect(hub.post(channel, 2) == 1)
        #expect(Hub().post(channel, 3) == 0)
        #expect(onDefault.values == [1])
        #expect(onOwn.values == [2])
        a.cancel()
        b.cancel()
        #expect(Hub.default.subscriberCount(of: channel) == 0)
    }

    // MARK: Order

    @Test func aPostIsHandedToSubscribersInRegistrationOrder() {
        let seen = Recorder<String>()
        let subscriptions = ["a", "b", "c"].map { name in
            hub.subscribe(to: .numbers, on: .immediate) { value in seen.append("\(name)\(value)") }
        }
        hub.post(.numbers, 1)
        hub.post(.numbers, 2)
        #expect(seen.values == ["a1", "b1", "c1", "a2", "b2", "c2"])
        for subscription in subscriptions { subscription.cancel() }
    }

    @Test(arguments: Stress.StressTests.TargetKind.allCases)
    func eachSubscriberGetsEveryPostOnceInPostingOrder(kind: Stress.StressTests.TargetKind) {
        let count = 10_000
        let recorders = [Recorder<Int>(), Recorder<Int>()]
        let done = DispatchSemaphore(value: 0)
        let overlaps = AtomicValue<Int>(0)
        let subscriptions = recorders.map { recorder in
            let running = AtomicValue<Int>(0)
            return hub.subscribe(to: .numbers, on: kind.make()) { value in
                if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                recorder.append(value)
                running.subtract(1, ordering: .acquiringAndReleasing)
                if value == count - 1 { done.signal() }
            }
        }
        var reached = 0
        for value in 0..<count { reached += hub.post(.numbers, value) }
        #expect(reached == 2 * count)
        // Wait on a semaphore, not by spinning: a spinning test thread can starve the queues.
        #expect(wait(done))
        #expect(wait(done))
        for recorder in recorders {
            let inPostingOrder = recorder.values == Array(0..<count)
            #expect(inPostingOrder)
        }
        #expect(overlaps.load(ordering: .relaxed) == 0)
        for subscription in subscriptions { subscription.cancel() }
    }

    // MARK: Targets

    @Test func eachSubscriberRunsOnTheTargetItChose() {
        let key = DispatchSpecificKey<String>()
        let serial = DispatchQueue(label: "hub.serial")
        serial.setSpecific(key: key, value: "serial")
        let operations = OperationQueue()
        let manual = ManualTarget()
        let posterThread = currentThreadIdentity()
        let onSerial = AtomicValue<Bool>(false)
        let onOperationQueue = AtomicValue<Bool>(false)
        let onPoster = AtomicValue<Bool>(false)
        let manualCalls = AtomicValue<Int>(0)
        let done = DispatchSemaphore(value: 0)

        let subscriptions = [
            hub.subscribe(to: .numbers, on: serial) { _ in
                onSerial.store(DispatchQueue.getSpecific(key: key) == "serial", ordering: .relaxed)
                done.signal()
            },
            hub.subscribe(to: .numbers, on: operations) { _ in
                onOperationQueue.store(OperationQueue.current === operations, ordering: .relaxed)
                done.signal()
            },
            hub.subscribe(to: .numbers, on: .immediate) { _ in
                onPoster.store(currentThreadIdentity() == posterThread, ordering: .relaxed)
            },
            hub.subscribe(to: .numbers, on: manual) { _ in manualCalls.add(1, ordering: .relaxed) },
        ]
        #expect(hub.post(.numbers, 1) == 4)
        #expect(onPoster.load(ordering: .relaxed) == true)
        #expect(manualCalls.load(ordering: .relaxed) == 0)
        #expect(manual.runAll() == 1)
        #expect(manualCalls.load(ordering: .relaxed) == 1)
        #expect(wait(done))
        #expect(wait(done))
        #expect(onSerial.load(ordering: .relaxed) == true)
        #expect(onOperationQueue.load(ordering: .relaxed) == true)
        for subscription in subscriptions { subscription.cancel() }
    }

    @MainActor
    final class MainActorLog {
        var values: [Int] = []
    }

    @Test func aMainActorSubscriberRunsOnTheMainActor() async {
        let log = await MainActor.run { MainActorLog() }
        let done = DispatchSemaphore(value: 0)
        let hub = self.hub
        let subscription = hub.subscribe(to: .numbers, on: .mainActor) { value in
            MainActor.preconditionIsolated()
            log.values.append(value)  // compiles only because the block is @MainActor
            if value == 99 { done.signal() }
        }
        DispatchQueue.global().async {
            for value in 0..<100 { hub.post(.numbers, value) }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                _ = wait(done)
                continuation.resume()
            }
        }
        let values = await MainActor.run { log.values }
        #expect(values == Array(0..<100))
        subscription.cancel()
    }

    // MARK: Senders

    @Test func aSenderFilterLetsThroughOnlyPostsFromThatObject() {
        let a = LifetimeWitness(LifetimeCounter())
        let b = LifetimeWitness(LifetimeCounter())
        let fromA = Recorder<Int>()
        let fromAnyone = Recorder<Int>()
        let filtered = hub.subscribe(to: .numbers, from: a, on: .immediate) { fromA.append($0) }
        let unfiltered = hub.subscribe(to: .numbers, on: .immediate) { fromAnyone.append($0) }
        #expect(hub.post(.numbers, 1, from: a) == 2)
        #expect(hub.post(.numbers, 2, from: b) == 1)
        #expect(hub.post(.numbers, 3) == 1)
        #expect(hub.post(.numbers, 4, from: a) == 2)
        #expect(fromA.values == [1, 4])
        #expect(fromAnyone.values == [1, 2, 3, 4])
        filtered.cancel()
        unfiltered.cancel()
    }

    @Test func aDeallocatedSenderIsNotKeptAliveAndMatchesNothing() {
        let counter = LifetimeCounter()
        var sender: LifetimeWitness? = LifetimeWitness(counter)
        let seen = Recorder<Int>()
        let subscription = hub.subscribe(to: .numbers, from: sender!, on: .immediate) { seen.append($0) }
        #expect(hub.post(.numbers, 1, from: sender!) == 1)
        let address = ObjectIdentifier(sender!)
        sender = nil
        #expect(counter.deinitialized == 1)

        // New objects, some of them likely at the old sender's address: none matches.
        var reachedAny = false
        var reusedTheAddress = 0
        for value in 2..<1_000 {
            let newcomer = LifetimeWitness(counter)
            if ObjectIdentifier(newcomer) == address { reusedTheAddress += 1 }
            if hub.post(.numbers, value, from: newcomer) != 0 { reachedAny = true }
        }
        #expect(!reachedAny)
        #expect(seen.values == [1])
        #expect(hub.subscriberCount(of: .numbers) == 1)  // still subscribed, until cancelled
        subscription.cancel()
        // Not an assertion (the allocator decides), but shows what the test exercised.
        if reusedTheAddress == 0 {
            print("aDeallocatedSenderIsNotKeptAliveAndMatchesNothing: the old address was not reused")
        }
    }

    // MARK: Slow subscribers

    enum SlowTarget: String, CaseIterable, CustomTestStringConvertible {
        case serialQueue, operationQueue
        var testDescription: String { rawValue }
        func make() -> any DeliveryTarget {
            switch self {
            case .serialQueue: DispatchQueue(label: "hub.slow")
            case .operationQueue:
                {
                    let queue = OperationQueue()
                    queue.maxConcurrentOperationCount = 1
                    return queue
                }()
            }
        }
    }

    /// Linux `NotificationCenter` waits for an observer's `OperationQueue`; a hub never waits.
    @Test(arguments: SlowTarget.allCases)
    func aSlowSubscriberDelaysNeitherThePosterNorOtherSubscribers(slow: SlowTarget) {
        let count = 1_000
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        let slowSeen = Recorder<Int>()
        let fastSeen = Recorder<Int>()
        let fastDone = DispatchSemaphore(value: 0)
        let slowDone = DispatchSemaphore(value: 0)
        let slowSubscription = hub.subscribe(to: .numbers, on: slow.make()) { value in
            slowSeen.append(value)
            if value == 0 {
                entered.signal()
                _ = wait(release)
            }
            if value == count - 1 { slowDone.signal() }
        }
        let fastSubscription = hub.subscribe(to: .numbers, on: DispatchQueue(label: "hub.fast")) { value in
            fastSeen.append(value)
            if value == count - 1 { fastDone.signal() }
        }
        let hub = self.hub
        hub.post(.numbers, 0)
        #expect(wait(entered))

        // Post from another thread, so that a post that waits fails the test instead of hanging it.
        let posted = DispatchSemaphore(value: 0)
        let reached = AtomicValue<Int>(0)
        Thread {
            for value in 1..<count { reached.add(hub.post(.numbers, value), ordering: .relaxed) }
            posted.signal()
        }.start()
        #expect(wait(posted))
        #expect(reached.load(ordering: .relaxed) == 2 * (count - 1))
        #expect(wait(fastDone))
        let fastGotEverything = fastSeen.values == Array(0..<count)
        #expect(fastGotEverything)
        #expect(slowSeen.values == [0])
        #expect(slowSubscription.statistics.pending == count - 1)

        release.signal()
        #expect(wait(slowDone))
        let slowGotEverything = slowSeen.values == Array(0..<count)
        #expect(slowGotEverything)
        slowSubscription.cancel()
        fastSubscription.cancel()
    }

    // MARK: Re-entrancy

    @Test func aBlockMaySubscribeAndTheNewSubscriberMissesThePostUnderWay() {
        let seen = Recorder<String>()
        let added = Locked<Hub.Subscription?>(uncounted: nil)
        let hub = self.hub
        let first = hub.subscribe(to: .numbers, on: .immediate) { value in
            seen.append("first \(value)")
            guard value == 1 else { return }
            let subscription = hub.subscribe(to: .numbers, on: .immediate) { value in seen.append("added \(value)") }
            added.withLock { $0 = subscription }
        }
        #expect(hub.post(.numbers, 1) == 1)
        #expect(hub.post(.numbers, 2) == 2)
        #expect(seen.values == ["first 1", "first 2", "added 2"])
        first.cancel()
        added.withLock { $0 }?.cancel()
        #expect(hub.subscriberCount(of: .numbers) == 0)
    }

    /// A post made from an `.immediate` block does not recurse into that block, and is nested in
    /// the post under way: subscribers after the block get it first (as with `NotificationCenter`).
    @Test func aBlockMayPostAndItsOwnBlockGetsThatPostAfterReturning() {
        let seen = Recorder<String>()
        let hub = self.hub
        let inner = AtomicValue<Int>(-1)
        let first = hub.subscribe(to: .numbers, on: .immediate) { value in
            seen.append("first begins \(value)")
            if value == 1 { inner.store(hub.post(.numbers, 2), ordering: .relaxed) }
            seen.append("first ends \(value)")
        }
        let second = hub.subscribe(to: .numbers, on: .immediate) { value in seen.append("second \(value)") }
        #expect(hub.post(.numbers, 1) == 2)
        #expect(inner.load(ordering: .relaxed) == 2)
        #expect(
            seen.values == [
                "first begins 1", "second 2", "first ends 1", "first begins 2", "first ends 2", "second 1",
            ]
        )
        first.cancel()
        second.cancel()
    }

    @Test func aBlockMayPostOnAnotherChannelAndCancelAnySubscription() {
        let seen = Recorder<String>()
        let hub = self.hub
        let victim = Locked<Hub.Subscription?>(uncounted: nil)
        let relay = hub.subscribe(to: .numbers, on: .immediate) { value in
            seen.append("relay \(value)")
            hub.post(.enemyAdded, HubTestEnemy(id: value))
            victim.withLock { $0 }?.cancel()
        }
        let enemies = hub.subscribe(to: .enemyAdded, on: .immediate) { enemy in seen.append("enemy \(enemy.id)") }
        let cancelled = hub.subscribe(to: .numbers, on: .immediate) { value in seen.append("victim \(value)") }
        victim.withLock { $0 = cancelled }
        #expect(hub.post(.numbers, 1) == 1)  // the victim was cancelled before its turn
        #expect(seen.values == ["relay 1", "enemy 1"])
        #expect(cancelled.isCancelled)
        #expect(hub.subscriberCount(of: .numbers) == 1)
        relay.cancel()
        enemies.cancel()
    }
}
