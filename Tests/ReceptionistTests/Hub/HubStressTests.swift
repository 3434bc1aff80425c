import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// The hub's guarantees under load: 4 threads post while 2 others subscribe and cancel (or
    /// release) subscriptions on the same channel (sizes scaled by `RECEPTIONIST_STRESS_SCALE`).
    @Suite(.serialized, .tags(.stress))
    struct HubStressTests {
        static let posters = 4
        static let churners = 2

        /// What one subscriber saw.
        final class Probe: Sendable {
            /// Per poster, the last sequence number delivered.
            private let last = Locked<[Int: Int]>(uncounted: [:])
            let outOfOrder = AtomicValue<Int>(0)
            let delivered = AtomicValue<Int>(0)
            /// Set once `cancel()` has returned (or, for a subscriber that cancels itself, by its block).
            let cancelReturned = AtomicValue<Bool>(false)
            /// Deliveries that started after `cancelReturned` was set.
            let late = AtomicValue<Int>(0)

            /// Records `stamped`; per poster, the deliveries must be consecutive posts: a subscriber
            /// takes every post from the one after it subscribed to the one before it was cancelled.
            func record(_ stamped: Int) {
                if cancelReturned.load(ordering: .acquiring) { late.add(1, ordering: .relaxed) }
                let poster = stamped >> 32
                let sequence = stamped & 0xFFFF_FFFF
                let consecutive = last.withLock { last in
                    defer { last[poster] = sequence }
                    guard let previous = last[poster] else { return true }
                    return sequence == previous + 1
                }
                if !consecutive { outOfOrder.add(1, ordering: .relaxed) }
                delivered.add(1, ordering: .releasing)
            }
        }

        /// Keeps posting and churning interleaved whatever the scheduler does: before post `sequence`
        /// of `count`, waits until the churning threads have done their share of `churn` cycles.
        static func pace(_ sequence: Int, of count: Int, churn: Int, cycles: borrowing AtomicValue<Int>) {
            while cycles.load(ordering: .relaxed) * count < sequence * churn { sched_yield() }
        }

        enum CancelMode: CaseIterable {
            /// `cancel()` on the subscriber's serial queue: no delivery may follow.
            case onTheTargetQueue
            /// `cancel()` from the churning thread: at most the one delivery already started may follow.
            case fromAnotherThread
            /// `cancel()` from the subscriber's own block: no delivery may follow.
            case fromItsOwnBlock
        }

        /// Churning subscriptions, each cancelled in one of three ways, never lose, duplicate or
        /// reorder a post, are not called after cancel, and account for every post `post` counted.
        @Test func churningSubscribersKeepOrderAndStopAtCancel() {
            let perPoster = eventsPerThread(20_000)
            let minimumChurn = scaled(300)
            let hub = Hub()
            let channel = Hub.Channel<Int>("stress")
            let senders = [LifetimeWitness(LifetimeCounter()), LifetimeWitness(LifetimeCounter())]

            // Long-lived subscribers, one per kind of target, half of them filtered by sender.
            let done = DispatchSemaphore(value: 0)
            let kinds = StressTests.TargetKind.allCases
            let longLived = kinds.enumerated().map { index, kind in
                let probe = Probe()
                let sender: LifetimeWitness? = index.isMultiple(of: 2) ? nil : senders[index % 4 / 2]
                let expected = sender == nil ? Self.posters * perPoster : Self.posters / 2 * perPoster
                let subscription = hub.subscribe(to: channel, from: sender, on: kind.make()) { value in
                    probe.record(value)
                    if probe.delivered.load(ordering: .acquiring) == expected { done.signal() }
                }
                return (subscription, probe, expected)
            }

            let reached = AtomicValue<Int>(0)
            let postersDone = AtomicValue<Int>(0)
            let churnCycles = AtomicValue<Int>(0)
            let graveyard = Locked<[(Hub.Subscription, Probe, strict: Bool)]>(uncounted: [])
            onThreads(Self.posters + Self.churners) { thread in
                if thread < Self.posters {
                    let sender = senders[thread % 2]
                    for sequence in 0..<perPoster {
                        Self.pace(sequence, of: perPoster, churn: minimumChurn, cycles: churnCycles)
                        reached.add(hub.post(channel, stamp(thread, sequence), from: sender), ordering: .relaxed)
                    }
                    postersDone.add(1, ordering: .releasing)
                    return
                }
                var random = SplitMix64(seed: UInt64(thread))
                var buried: [(Hub.Subscription, Probe, strict: Bool)] = []
                while postersDone.load(ordering: .acquiring) < Self.posters {
                    let probe = Probe()
                    let mode = CancelMode.allCases.randomElement(using: &random)!
                    let sender: LifetimeWitness? =
                        Bool.random(using: &random) ? nil : senders.randomElement(using: &random)
                    let serialQueue = DispatchQueue(label: "hub.stress.churn")
                    let target: any DeliveryTarget =
                        mode == .onTheTargetQueue ? serialQueue : kinds.randomElement(using: &random)!.make()
                    let ownBox = Locked<Hub.Subscription?>(uncounted: nil)
                    let selfCancelAfter = Int.random(in: 1...8, using: &random)
                    let subscription = hub.subscribe(to: channel, from: sender, on: target) { value in
                        probe.record(value)
                        guard probe.delivered.load(ordering: .relaxed) >= selfCancelAfter,
                            let own = ownBox.withLock({ box in box.take() })
                        else { return }
                        own.cancel()
                        probe.cancelReturned.store(true, ordering: .releasing)
                    }
                    if mode == .fromItsOwnBlock { ownBox.withLock { $0 = subscription } }
                    for _ in 0..<Int.random(in: 0..<200, using: &random) { sched_yield() }
                    var strict = true
                    switch mode {
                    case .onTheTargetQueue:
                        serialQueue.sync {
                            subscription.cancel()
                            probe.cancelReturned.store(true, ordering: .releasing)
                        }
                    case .fromAnotherThread:
                        strict = false
                        subscription.cancel()
                        probe.cancelReturned.store(true, ordering: .releasing)
                    case .fromItsOwnBlock:
                        // Give the block a chance to cancel itself; whoever takes the subscription
                        // out of the box cancels it.
                        for _ in 0..<Int.random(in: 0..<200, using: &random) { sched_yield() }
                        if let own = ownBox.withLock({ box in box.take() }) {
                            strict = false
                            own.cancel()
                            probe.cancelReturned.store(true, ordering: .releasing)
                        }
                    }
                    buried.append((subscription, probe, strict))
                    churnCycles.add(1, ordering: .relaxed)
                }
                let churned = buried
                graveyard.withLock { $0.append(contentsOf: churned) }
            }

            for _ in longLived { #expect(wait(done)) }
            #expect(hub.subscriberCount(of: channel) == longLived.count)

            let churned = graveyard.withLock { $0 }
            #expect(churned.count >= minimumChurn - 1)
            var accepted = 0
            for (subscription, probe, expected) in longLived {
                #expect(probe.delivered.load(ordering: .acquiring) == expected)
                #expect(probe.outOfOrder.load(ordering: .relaxed) == 0)
                accepted += subscription.statistics.received
                subscription.cancel()
            }
            var strictLate = 0
            var lenientLate = 0
            var outOfOrder = 0
            var notCancelled = 0
            for (subscription, probe, strict) in churned {
                if !subscription.isCancelled { notCancelled += 1 }
                accepted += subscription.statistics.received
                outOfOrder += probe.outOfOrder.load(ordering: .relaxed)
                let late = probe.late.load(ordering: .relaxed)
                if strict { strictLate += late } else { lenientLate = max(lenientLate, late) }
            }
            #expect(notCancelled == 0)
            #expect(outOfOrder == 0)
            #expect(strictLate == 0, "a delivery started after a cancel on the target or in the block")
            #expect(lenientLate <= 1, "more than the one delivery already started followed a cancel")
            #expect(accepted == reached.load(ordering: .relaxed), "post counted exactly the subscribers that took it")
            #expect(hub.channelCount == 0)
        }

        /// Subscriptions released (not cancelled) on churning threads while others post: the hub
        /// keeps no block and no sender alive, and forgets every subscriber.
        @Test func releasedSubscriptionsAndSendersAreNotKeptAlive() {
            let perPoster = eventsPerThread(10_000)
            let minimumChurn = scaled(300)
            let churnCycles = AtomicValue<Int>(0)
            let hub = Hub()
            let channel = Hub.Channel<Int>("stress.lifetimes")
            let blocks = LifetimeCounter()
            let senders = LifetimeCounter()
            let made = AtomicValue<Int>(0)
            let sendersMade = AtomicValue<Int>(0)
            let outOfOrder = AtomicValue<Int>(0)
            let postersDone = AtomicValue<Int>(0)
            let kinds = StressTests.TargetKind.allCases

            onThreads(Self.posters + Self.churners) { thread in
                if thread < Self.posters {
                    // Half the posters post from a sender of their own, which lives while they post.
                    let sender = thread.isMultiple(of: 2) ? nil : LifetimeWitness(senders)
                    if sender != nil { sendersMade.add(1, ordering: .relaxed) }
                    for sequence in 0..<perPoster {
                        Self.pace(sequence, of: perPoster, churn: minimumChurn, cycles: churnCycles)
                        hub.post(channel, stamp(thread, sequence), from: sender)
                    }
                    postersDone.add(1, ordering: .releasing)
                    return
                }
                var random = SplitMix64(seed: UInt64(thread) &* 7)
                var alive: [Hub.Subscription] = []
                var probes: [Probe] = []
                while postersDone.load(ordering: .acquiring) < Self.posters {
                    let probe = Probe()
                    probes.append(probe)
                    let witness = LifetimeWitness(blocks)
                    made.add(1, ordering: .relaxed)
                    // A short-lived sender: released right away, so its filter matches nothing.
                    let sender: LifetimeWitness? =
                        Int.random(in: 0..<4, using: &random) == 0 ? LifetimeWitness(senders) : nil
                    if sender != nil { sendersMade.add(1, ordering: .relaxed) }
                    alive.append(
                        hub.subscribe(to: channel, from: sender, on: kinds.randomElement(using: &random)!.make()) {
                            value in
                            witness.touch()
                            probe.record(value)
                        }
                    )
                    // Release a random subscription (its deinit cancels it), keeping a few alive.
                    if alive.count > 3 { alive.remove(at: Int.random(in: 0..<alive.count, using: &random)) }
                    for _ in 0..<Int.random(in: 0..<100, using: &random) { sched_yield() }
                    churnCycles.add(1, ordering: .relaxed)
                }
                alive.removeAll()
                outOfOrder.add(probes.reduce(0) { $0 + $1.outOfOrder.load(ordering: .relaxed) }, ordering: .relaxed)
            }

            #expect(made.load(ordering: .relaxed) >= minimumChurn - 1)
            #expect(hub.subscriberCount(of: channel) == 0)
            #expect(hub.channelCount == 0)
            #expect(senders.deinitialized == sendersMade.load(ordering: .relaxed))
            // A block is released when a delivery running on another thread returns.
            #expect(waitUntil(seconds: 60) { blocks.deinitialized == made.load(ordering: .relaxed) })
            #expect(outOfOrder.load(ordering: .relaxed) == 0)
        }
    }
}
