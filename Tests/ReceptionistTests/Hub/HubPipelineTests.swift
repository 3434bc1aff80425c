import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Subscribers with stages of their own, started with `Hub.pipeline(for:from:)`: one post stream
/// through several pipelines (timelines on a `ManualScheduler`, tick = 1 ms), the hub's rules
/// (sender filter, snapshot, re-entrancy, never waiting) and a pipeline's end (flush, finish,
/// cancel, release).
@Suite struct HubPipelineTests {
    let hub = Hub()

    // MARK: One post stream, several pipelines

    @Test func onePostStreamFeedsAThrottledAndABatchedSubscriberEachOnItsOwnTimeline() {
        // The timeline of Stages.md, "One source, several consumers".
        let diagrams = Marbles().fanOut("abcde------f--|", consumers: 3) { clock, hub, channel, outs in
            [
                hub.pipeline(for: channel)
                    .throttle(for: .milliseconds(4), scheduler: clock, latest: true)
                    .deliver(on: .immediate) { outs[0]($0.marble) },
                hub.pipeline(for: channel)
                    .batch(count: 3, every: .milliseconds(5), scheduler: clock)
                    .deliver(on: .immediate) { outs[1]($0.marble) },
                hub.subscribe(to: channel, on: .immediate) { outs[2]($0.marble) },
            ]
        }
        #expect(diagrams[0] == "a---d---e---f-|")
        #expect(diagrams[1] == "--[abc]-----[de]-----([f]|)")
        #expect(diagrams[2] == "abcde------f--|")
    }

    @Test func aDebouncedSubscriberAndAPlainOneShareThePosts() {
        // Digits at 0 1 4 10, finish at 11: the debounce hands on 1 at 4 (its deadline, before
        // 4 arrives), 4 at 7, and 10 on finish.
        let diagrams = Marbles().fanOut("ab--c-----d|", consumers: 2) { clock, hub, channel, outs in
            [
                hub.pipeline(for: channel)
                    .debounce(for: .milliseconds(3), scheduler: clock)
                    .deliver(on: .immediate) { outs[0]($0.marble) },
                hub.subscribe(to: channel, on: .immediate) { outs[1]($0.marble) },
            ]
        }
        #expect(diagrams[0] == "----b--c---(d|)")
        #expect(diagrams[1] == "ab--c-----d|")
    }

    @Test func aCoalescingSubscriberFoldsWhatWaitsForItsTarget() {
        let target = ManualTarget()
        let seen = Recorder<String>()
        let subscription = hub.pipeline(for: .numbers).map { "\($0)" }.coalesce()
            .deliver(on: target) { seen.append("\($0.latest)×\($0.count)") }
        for value in 1...3 { hub.post(.numbers, value) }
        #expect(target.runAll() == 1)
        #expect(seen.values == ["3×3"])
        subscription.cancel()
    }

    @Test func aPipelineWithoutStagesIsASubscriptionWithABufferPolicy() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let subscription = hub.pipeline(for: .numbers).deliver(on: target, buffering: .dropOldest(capacity: 2)) {
            seen.append($0)
        }
        for value in 1...5 { #expect(hub.post(.numbers, value) == 1) }
        target.runAll()
        #expect(seen.values == [4, 5])
        #expect(subscription.statistics.dropped == 3)
        subscription.cancel()
    }

    @Test func eachDeliverOfOnePipelineValueIsASubscriberOfItsOwn() {
        let seen = Recorder<String>()
        let doubled = hub.pipeline(for: .numbers).map { $0 * 2 }
        let first = doubled.deliver(on: .immediate) { seen.append("first \($0)") }
        let second = doubled.filter { $0 > 2 }.deliver(on: .immediate) { seen.append("second \($0)") }
        #expect(hub.subscriberCount(of: .numbers) == 2)
        #expect(hub.post(.numbers, 1) == 2)
        #expect(hub.post(.numbers, 2) == 2)
        #expect(seen.values == ["first 2", "first 4", "second 4"])
        first.cancel()
        second.cancel()
        #expect(hub.channelCount == 0)
    }

    @Test func aSenderFilterAppliesToAPipeline() {
        let sender = LifetimeWitness(LifetimeCounter())
        let other = LifetimeWitness(LifetimeCounter())
        let seen = Recorder<[Int]>()
        let subscription = hub.pipeline(for: .numbers, from: sender).batch(count: 2).deliver(on: .immediate) {
            seen.append($0)
        }
        #expect(hub.post(.numbers, 1, from: sender) == 1)
        #expect(hub.post(.numbers, 2, from: other) == 0)
        #expect(hub.post(.numbers, 3) == 0)
        #expect(hub.post(.numbers, 4, from: sender) == 1)
        #expect(seen.values == [[1, 4]])
        subscription.cancel()
    }

    // MARK: Never waiting

    @Test(.exitTest) func aWaitingPolicyIsRejectedWithAMessageNamingTheParameter() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Hub().pipeline(for: Hub.Channel<Int>("waiting")).batch(count: 2)
                .deliver(on: DispatchQueue(label: "waiting"), buffering: .waiting(capacity: 4)) { _ in }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(
            message.contains(
                "Hub.pipeline(for:from:) deliver(on:buffering:_:) buffering must not be waiting(capacity: 4): "
                    + "a post never waits for a subscriber"
            )
        )
    }

    @Test func aDroppingPolicyBoundsAStagedSubscriberAndThePostNeverWaits() {
        // The target never runs: the outputs wait, and beyond the capacity they are dropped.
        let target = ManualTarget()
        let subscription = hub.pipeline(for: .numbers).map { $0 + 1 }
            .deliver(on: target, buffering: .dropNewest(capacity: 3)) { _ in }
        for value in 0..<100 { #expect(hub.post(.numbers, value) == 1) }
        #expect(subscription.statistics.received == 100)
        #expect(subscription.statistics.dropped == 97)
        subscription.cancel()
    }

    // MARK: The hub's rules

    @Test func aPipelineStartedDuringAPostDoesNotGetThatPost() {
        let seen = Recorder<String>()
        let started = Locked<[Hub.Subscription]>(uncounted: [])
        let hub = self.hub
        let starter = hub.subscribe(to: .numbers, on: .immediate) { value in
            let subscription = hub.pipeline(for: .numbers).map { "staged \($0)" }.deliver(on: .immediate) {
                seen.append($0)
            }
            started.withLock { $0.append(subscription) }
        }
        hub.post(.numbers, 1)
        #expect(seen.values == [])
        hub.post(.numbers, 2)
        #expect(seen.values == ["staged 2"])
        starter.cancel()
        for subscription in started.withLock({ $0 }) { subscription.cancel() }
    }

    @Test func postsReachStagedAndPlainSubscribersInRegistrationOrder() {
        let seen = Recorder<String>()
        let subscriptions = [
            hub.subscribe(to: .numbers, on: .immediate) { seen.append("a\($0)") },
            hub.pipeline(for: .numbers).filter { $0 > 0 }.deliver(on: .immediate) { seen.append("b\($0)") },
            hub.subscribe(to: .numbers, on: .immediate) { seen.append("c\($0)") },
        ]
        hub.post(.numbers, 0)
        hub.post(.numbers, 1)
        #expect(seen.values == ["a0", "c0", "a1", "b1", "c1"])
        for subscription in subscriptions { subscription.cancel() }
    }

    @Test func aStagedSubscribersBlockMayPostCancelItselfAndStartAnotherPipeline() {
        let seen = Recorder<String>()
        let own = BackReference<Hub.Subscription>()
        let later = Locked<Hub.Subscription?>(uncounted: nil)
        let hub = self.hub
        let keep = own.set(
            hub.pipeline(for: .numbers).batch(count: 2).deliver(on: .immediate) { batch in
                seen.append("batch \(batch)")
                if batch == [1, 2] { hub.post(.numbers, 3) }  // nested: after this block
                if batch == [3, 4] {
                    own.value?.cancel()
                    let next = hub.pipeline(for: .numbers).deliver(on: .immediate) { seen.append("next \($0)") }
                    later.withLock { $0 = next }
                }
            }
        )
        hub.post(.numbers, 1)
        hub.post(.numbers, 2)  // [1, 2]; its block posts 3, which waits in the batch
        #expect(seen.values == ["batch [1, 2]"])
        hub.post(.numbers, 4)  // [3, 4]: the block cancels its own subscription
        #expect(keep.isCancelled)
        hub.post(.numbers, 5)
        #expect(seen.values == ["batch [1, 2]", "batch [3, 4]", "next 5"])
        #expect(hub.subscriberCount(of: .numbers) == 1)
        later.withLock { $0 }?.cancel()
    }

    // MARK: Flush, finish, cancel, release

    @Test func flushHandsOnWhatTheStagesHoldAndKeepsTheSubscription() {
        let seen = Recorder<[Int]>()
        let subscription = hub.pipeline(for: .numbers).batch(count: 10).deliver(on: .immediate) { seen.append($0) }
        hub.post(.numbers, 1)
        hub.post(.numbers, 2)
        subscription.flush()
        #expect(seen.values == [[1, 2]])
        hub.post(.numbers, 3)
        subscription.flush()
        #expect(seen.values == [[1, 2], [3]])
        #expect(!subscription.isFinished && !subscription.isCancelled)
        #expect(hub.subscriberCount(of: .numbers) == 1)
        subscription.cancel()
    }

    @Test func flushDoesNothingForASubscriberWithoutStages() {
        let target = ManualTarget()
        let subscription = hub.subscribe(to: .numbers, on: target) { _ in }
        hub.post(.numbers, 1)
        subscription.flush()
        #expect(target.pendingCount == 1)
        #expect(subscription.statistics.delivered == 0)
        subscription.cancel()
    }

    @Test func finishUnsubscribesHandsOnWhatTheStagesHoldDeliversThenReleasesTheBlock() {
        let target = ManualTarget()
        let blocks = LifetimeCounter()
        let seen = Recorder<[Int]>()
        let ended = AtomicValue<Int>(0)
        var subscription: Hub.Subscription? = {
            let witness = LifetimeWitness(blocks)
            return hub.pipeline(for: .numbers).batch(count: 10).deliver(on: target) { batch in
                witness.touch()
                seen.append(batch)
            }
        }()
        hub.post(.numbers, 1)
        hub.post(.numbers, 2)
        subscription?.finish { ended.add(1, ordering: .relaxed) }
        #expect(hub.subscriberCount(of: .numbers) == 0)
        #expect(hub.post(.numbers, 3) == 0)
        // Released right after finish: nothing is lost.
        subscription = nil
        #expect(ended.load(ordering: .relaxed) == 0)
        target.runAll()
        #expect(seen.values == [[1, 2]])
        #expect(ended.load(ordering: .relaxed) == 1)
        #expect(blocks.deinitialized == 1)
    }

    @Test func cancelDiscardsWhatTheStagesHoldAndWhatWaitsAndReleasesTheBlock() {
        let target = ManualTarget()
        let clock = ManualScheduler()
        let blocks = LifetimeCounter()
        let seen = Recorder<[Int]>()
        let subscription = {
            let witness = LifetimeWitness(blocks)
            return hub.pipeline(for: .numbers).batch(count: 2, every: .milliseconds(5), scheduler: clock)
                .deliver(on: target) { batch in
                    witness.touch()
                    seen.append(batch)
                }
        }()
        hub.post(.numbers, 1)
        hub.post(.numbers, 2)  // [1, 2] waits for the target
        hub.post(.numbers, 3)  // held by the batch, its timer armed
        #expect(clock.pendingCount == 1)
        subscription.cancel()
        #expect(subscription.isCancelled)
        #expect(hub.subscriberCount(of: .numbers) == 0)
        #expect(hub.post(.numbers, 4) == 0)
        clock.advance(by: .milliseconds(10))
        target.runAll()
        #expect(seen.values == [])
        #expect(subscription.statistics.discarded == 1)
        #expect(blocks.deinitialized == 1)
    }

    @Test func releasingTheSubscriptionCancelsThePipelineAndTheHubKeepsNothingElse() {
        let blocks = LifetimeCounter()
        let owner = LifetimeCounter()
        let seen = Recorder<Int>()
        do {
            let witness = LifetimeWitness(blocks)
            let ownerWitness = LifetimeWitness(owner)
            _ = hub.pipeline(for: .numbers, from: ownerWitness).map { $0 }.deliver(on: .immediate) { value in
                witness.touch()
                seen.append(value)
            }
        }
        #expect(hub.subscriberCount(of: .numbers) == 0)
        #expect(blocks.deinitialized == 1)
        #expect(owner.deinitialized == 1)
        #expect(hub.post(.numbers, 1) == 0)
        #expect(seen.values == [])
    }

    @Test func aStartedPipelineDoesNotKeepItsHubAliveAndCancelReleasesItsBlock() {
        let blocks = LifetimeCounter()
        var hub: Hub? = Hub()
        weak let weakHub = hub
        let subscription = {
            let witness = LifetimeWitness(blocks)
            return hub!.pipeline(for: .numbers).batch(count: 2).deliver(on: .immediate) { _ in witness.touch() }
        }()
        hub = nil
        #expect(weakHub == nil, "a started pipeline does not keep its hub alive")
        #expect(blocks.deinitialized == 0)
        subscription.cancel()
        #expect(blocks.deinitialized == 1)
    }
}
