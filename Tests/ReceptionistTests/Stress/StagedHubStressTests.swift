import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// Subscribers with stages (`Hub.pipeline(for:from:)`) under load: 4 threads post while 2
    /// others start staged subscribers of random shapes on random targets and end them (cancel
    /// on the target, from another thread, from their own block, or finish) during the posts
    /// (sizes scaled by `RECEPTIONIST_STRESS_SCALE`).
    @Suite(.serialized, .tags(.stress))
    struct StagedHubStressTests {
        static let posters = 4
        static let churners = 2

        /// What one staged subscriber saw.
        final class Probe: Sendable {
            /// Whether its stages lose nothing: per poster, its deliveries are then consecutive
            /// posts; otherwise (a throttle) only increasing.
            let lossless: Bool
            /// Per poster, the last sequence number delivered.
            private let last = Locked<[Int: Int]>(uncounted: [:])
            /// Elements delivered out of order, twice, or (lossless) after a gap.
            let disorder = AtomicValue<Int>(0)
            /// Elements the task block got.
            let delivered = AtomicValue<Int>(0)
            /// Elements the first stage took.
            let taken = AtomicValue<Int>(0)
            /// Set once `cancel()` has returned (or, for a subscriber that cancels itself, by its
            /// block).
            let cancelReturned = AtomicValue<Bool>(false)
            /// Task blocks that started after `cancelReturned` was set.
            let late = AtomicValue<Int>(0)
            /// Task blocks run.
            let blocks = AtomicValue<Int>(0)

            init(lossless: Bool) {
                self.lossless = lossless
            }

            func record(_ values: [Int]) {
                if cancelReturned.load(ordering: .acquiring) { late.add(1, ordering: .relaxed) }
                let lossless = self.lossless
                let bad = last.withLock { last in
                    var bad = 0
                    for stamped in values {
                        let poster = stamped >> 32
                        let sequence = stamped & 0xFFFF_FFFF
                        if let previous = last[poster], lossless ? sequence != previous + 1 : sequence <= previous {
                            bad += 1
                        }
                        last[poster] = sequence
                    }
                    return bad
                }
                disorder.add(bad, ordering: .relaxed)
                delivered.add(values.count, ordering: .relaxed)
                blocks.add(1, ordering: .releasing)
            }
        }

        /// The stages of a subscriber; each counts what its first stage takes.
        enum Shape: CaseIterable {
            /// `batch(count: 5)`: lossless, hands on its partial batch on finish.
            case batched
            /// `batch(count: 16, every: 1 ms)` on the library's timers: lossless.
            case timedBatch
            /// `filter`, then `map`: lossless, no state.
            case filtered
            /// `throttle(for: 200 µs, latest: true)`: drops, in order.
            case throttled

            var lossless: Bool { self != .throttled }

            func start(
                on hub: Hub,
                _ channel: Hub.Channel<Int>,
                target: any DeliveryTarget,
                probe: Probe,
                then after: @escaping @Sendable () -> Void
            ) -> Hub.Subscription {
                let counted = hub.pipeline(for: channel).map { value in
                    probe.taken.add(1, ordering: .relaxed)
                    return value
                }
                let block: @Sendable ([Int]) -> Void = { values in
                    probe.record(values)
                    after()
                }
                return switch self {
                case .batched: counted.batch(count: 5).deliver(on: target, block)
                case .timedBatch: counted.batch(count: 16, every: .milliseconds(1)).deliver(on: target, block)
                case .filtered: counted.filter { $0 >= 0 }.map { [$0] }.deliver(on: target, block)
                case .throttled:
                    counted.throttle(for: .microseconds(200), latest: true).map { [$0] }.deliver(on: target, block)
                }
            }
        }

        enum EndMode: CaseIterable {
            /// `cancel()` on the subscriber's serial queue: no task block may follow.
            case cancelOnTheTargetQueue
            /// `cancel()` from the churning thread: at most the one task block already started may
            /// follow.
            case cancelFromAnotherThread
            /// `cancel()` from the subscriber's own block: no task block may follow.
            case cancelFromItsOwnBlock
            /// `finish()`: everything the stages took is delivered.
            case finish
        }

        /// A churned subscriber, once ended.
        struct Ended: Sendable {
            let subscription: Hub.Subscription
            let probe: Probe
            let mode: EndMode
            /// Signalled when a finished subscriber ended.
            let finished: DispatchSemaphore
            /// Whether the cancel was made where no task block may follow it.
            let strict: Bool
        }

        /// Staged subscribers started and ended during the posts: every live one gets every post
        /// through its stages, per poster in posting order (lossless stages lose nothing, a
        /// throttle only drops); no task block starts after a cancel made on the target or in the
        /// block; a finished one delivers everything its stages took; the hub forgets them all and
        /// releases every block.
        @Test func stagedSubscribersStartedAndEndedDuringPostsKeepOrderLoseNothingAndStopAtCancel() {
            let perPoster = eventsPerThread(10_000)
            let minimumChurn = scaled(300)
            let hub = Hub()
            let channel = Hub.Channel<Int>("stress.staged")
            let kinds = StressTests.TargetKind.allCases

            // Long-lived subscribers, subscribed before the posts: one per target kind, each of
            // another shape.
            let longLived = zip(kinds, Shape.allCases).map { kind, shape in
                let probe = Probe(lossless: shape.lossless)
                return (shape.start(on: hub, channel, target: kind.make(), probe: probe) {}, probe)
            }

            let postersDone = AtomicValue<Int>(0)
            let churnCycles = AtomicValue<Int>(0)
            let blocks = LifetimeCounter()
            let made = AtomicValue<Int>(0)
            let graveyard = Locked<[Ended]>(uncounted: [])
            onThreads(Self.posters + Self.churners) { thread in
                if thread < Self.posters {
                    for sequence in 0..<perPoster {
                        HubStressTests.pace(sequence, of: perPoster, churn: minimumChurn, cycles: churnCycles)
                        hub.post(channel, stamp(thread, sequence))
                    }
                    postersDone.add(1, ordering: .releasing)
                    return
                }
                var random = SplitMix64(seed: UInt64(thread) &* 31)
                var ended: [Ended] = []
                while postersDone.load(ordering: .acquiring) < Self.posters {
                    let shape = Shape.allCases.randomElement(using: &random)!
                    let mode = EndMode.allCases.randomElement(using: &random)!
                    let probe = Probe(lossless: shape.lossless)
                    let serialQueue = DispatchQueue(label: "hub.staged.churn")
                    let target: any DeliveryTarget =
                        mode == .cancelOnTheTargetQueue ? serialQueue : kinds.randomElement(using: &random)!.make()
                    let ownBox = Locked<Hub.Subscription?>(uncounted: nil)
                    let selfCancelAfter = Int.random(in: 1...4, using: &random)
                    let witness = LifetimeWitness(blocks)
                    made.add(1, ordering: .relaxed)
                    let subscription = shape.start(on: hub, channel, target: target, probe: probe) {
                        witness.touch()
                        guard probe.blocks.load(ordering: .relaxed) >= selfCancelAfter,
                            let own = ownBox.withLock({ box in box.take() })
                        else { return }
                        own.cancel()
                        probe.cancelReturned.store(true, ordering: .releasing)
                    }
                    if mode == .cancelFromItsOwnBlock { ownBox.withLock { $0 = subscription } }
                    for _ in 0..<Int.random(in: 0..<200, using: &random) { sched_yield() }
                    var strict = true
                    let finished = DispatchSemaphore(value: 0)
                    switch mode {
                    case .cancelOnTheTargetQueue:
                        serialQueue.sync {
                            subscription.cancel()
                            probe.cancelReturned.store(true, ordering: .releasing)
                        }
                    case .cancelFromAnotherThread:
                        strict = false
                        subscription.cancel()
                        probe.cancelReturned.store(true, ordering: .releasing)
                    case .cancelFromItsOwnBlock:
                        // Give the block a chance to cancel itself; whoever takes the subscription
                        // out of the box cancels it.
                        for _ in 0..<Int.random(in: 0..<200, using: &random) { sched_yield() }
                        if let own = ownBox.withLock({ box in box.take() }) {
                            strict = false
                            own.cancel()
                            probe.cancelReturned.store(true, ordering: .releasing)
                        }
                    case .finish:
                        subscription.finish { finished.signal() }
                    }
                    ended.append(
                        Ended(subscription: subscription, probe: probe, mode: mode, finished: finished, strict: strict))
                    churnCycles.add(1, ordering: .relaxed)
                }
                let churned = ended
                graveyard.withLock { $0.append(contentsOf: churned) }
            }

            // The long-lived subscribers finish: their stages hand on what they hold.
            let total = Self.posters * perPoster
            let longLivedDone = DispatchSemaphore(value: 0)
            for (subscription, _) in longLived { subscription.finish { longLivedDone.signal() } }
            for _ in longLived { #expect(wait(longLivedDone)) }
            // Plain values in the expectations: a failed one reflects its operands, and the
            // library's objects hold noncopyable fields that reflection cannot copy.
            for (subscription, probe) in longLived {
                let finished = subscription.isFinished
                let disorder = probe.disorder.load(ordering: .relaxed)
                let taken = probe.taken.load(ordering: .relaxed)
                let delivered = probe.delivered.load(ordering: .relaxed)
                #expect(finished)
                #expect(disorder == 0)
                #expect(taken == total, "a long-lived subscriber's stages did not take every post")
                #expect(probe.lossless ? delivered == total : delivered >= 1, "delivered \(delivered) of \(total)")
            }

            let churned = graveyard.withLock { $0 }
            #expect(churned.count >= minimumChurn - 1)
            var disorder = 0
            var strictLate = 0
            var lenientLate = 0
            var notEnded = 0
            var lostOnFinish = 0
            for ended in churned {
                disorder += ended.probe.disorder.load(ordering: .relaxed)
                if ended.mode == .finish {
                    #expect(wait(ended.finished))
                    if !ended.subscription.isFinished { notEnded += 1 }
                    if ended.probe.lossless
                        && ended.probe.delivered.load(ordering: .relaxed) != ended.probe.taken.load(ordering: .relaxed)
                    {
                        lostOnFinish += 1
                    }
                    continue
                }
                if !ended.subscription.isCancelled { notEnded += 1 }
                let late = ended.probe.late.load(ordering: .relaxed)
                if ended.strict { strictLate += late } else { lenientLate = max(lenientLate, late) }
            }
            #expect(notEnded == 0)
            #expect(disorder == 0, "a staged subscriber got a post twice, out of order, or (lossless) skipped one")
            #expect(lostOnFinish == 0, "a finished subscriber did not deliver everything its stages took")
            #expect(strictLate == 0, "a task block started after a cancel on the target or in the block")
            #expect(lenientLate <= 1, "more than the one task block already started followed a cancel")
            #expect(hub.channelCount == 0)
            // A block is released when a delivery running on another thread returns.
            #expect(waitUntil(seconds: 60) { blocks.deinitialized == made.load(ordering: .relaxed) })
        }
    }
}
