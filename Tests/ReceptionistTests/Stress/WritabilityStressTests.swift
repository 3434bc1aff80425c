import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// Producers that follow their writability (issue 40): each listens with
    /// `onWritabilityChange` and stops sending while paused, on a receptionist, pipelines with each
    /// kind of holding stage, a hub pipeline and an observation, while a consumer of random speed
    /// drains and, per seed, a cancel or a finish lands at a random moment. Every state change is
    /// delivered once and in order (never the same twice in a row, the end last), nothing is lost
    /// or duplicated, each producer's order is kept, and what is held stays within the bound.
    @Suite(.serialized, .tags(.stress))
    struct WritabilityStressTests {
        static let producers = 4
        static let low = 16
        static let high = 64

        enum Shape: String, CaseIterable, CustomTestStringConvertible, Sendable {
            case direct, map, timedBatch, throttle, debounce, hub, observation
            var testDescription: String { rawValue }
            /// Whether every element reaches the consumer (throttle and debounce drop by design).
            var isLossless: Bool { self != .throttle && self != .debounce }
        }

        enum Ending: Int, CaseIterable, Sendable {
            case none, cancel, finish
        }

        /// The states one listener heard, and a condition producers wait on while paused.
        final class Follower: Sendable {
            private let state = Locked<[Writability]>(uncounted: [])
            private let condition = NSCondition()

            func heard(_ writability: Writability) {
                condition.lock()
                state.withLock { $0.append(writability) }
                condition.broadcast()
                condition.unlock()
            }

            var heard: [Writability] { state.withLock { $0 } }
            /// How many pauses were heard so far.
            var pausesHeard: Int { state.withLock { $0.count { $0 == .paused } } }

            /// Waits until `pauses` pauses were heard: the handler hears a change a moment after
            /// the send that made it answered.
            func waitUntilHeard(pauses: Int) -> Bool {
                condition.lock()
                defer { condition.unlock() }
                let deadline = Date(timeIntervalSinceNow: 60)
                while pausesHeard < pauses {
                    if !condition.wait(until: deadline) { return false }
                }
                return true
            }
            var current: Writability? { state.withLock { $0.last } }

            /// Waits while the last state heard is `.paused`; `false` if it never changed.
            func waitWhilePaused() -> Bool {
                condition.lock()
                defer { condition.unlock() }
                let deadline = Date(timeIntervalSinceNow: 60)
                while current == .paused {
                    if !condition.wait(until: deadline) { return false }
                }
                return true
            }
        }

        /// A source of the given shape: how to produce one value, and the handle it runs under.
        struct Subject {
            let handle: any DeliveryHandle
            let produce: @Sendable (Int) -> Bool
            /// What the intake and the delivery held at most.
            let maxHeld: @Sendable () -> Int
        }

        static func subject(
            _ shape: Shape, on queue: DispatchQueue, _ consume: @escaping @Sendable ([Int]) -> Void
        ) -> Subject {
            let policy = BufferPolicy.watermarks(low: low, high: high)
            func receptionist(_ make: (Pipeline<ReceptionistInput<Int>, Int>) -> Receptionist<Int>) -> Subject {
                let receptionist = make(Receptionist.pipeline(of: Int.self))
                return Subject(
                    handle: receptionist, produce: { receptionist.send($0).isAccepted },
                    maxHeld: {
                        let statistics = receptionist.statistics
                        return statistics.maxPending + statistics.maxPendingBeforeStages
                    })
            }
            switch shape {
            case .direct:
                let receptionist = Receptionist<Int>(on: queue, buffering: policy) { consume([$0]) }
                return Subject(
                    handle: receptionist, produce: { receptionist.send($0).isAccepted },
                    maxHeld: { receptionist.statistics.maxPending })
            case .map:
                return receptionist { $0.map { $0 }.deliver(on: queue, buffering: policy) { consume([$0]) } }
            case .timedBatch:
                return receptionist {
                    $0.batch(count: 500, every: .milliseconds(2)).deliver(on: queue, buffering: policy, consume)
                }
            case .throttle:
                return receptionist {
                    $0.throttle(for: .microseconds(200), latest: true).deliver(on: queue, buffering: policy) {
                        consume([$0])
                    }
                }
            case .debounce:
                return receptionist {
                    $0.debounce(for: .microseconds(100)).deliver(on: queue, buffering: policy) { consume([$0]) }
                }
            case .hub:
                let hub = Hub()
                let channel = Hub.Channel<Int>("WritabilityStressTests")
                let subscription = hub.pipeline(for: channel).map { $0 }.deliver(on: queue, buffering: policy) {
                    consume([$0])
                }
                return Subject(
                    handle: subscription, produce: { hub.post(channel, $0) == 1 },
                    maxHeld: {
                        let statistics = subscription.statistics
                        return statistics.maxPending + statistics.maxPendingBeforeStages
                    })
            case .observation:
                let box = ObservableValue(-1)
                let token = box.receptionist(options: []).map(\.newValue).deliver(on: queue, buffering: policy) {
                    consume([$0])
                }
                return Subject(
                    handle: token,
                    produce: { value in
                        guard !token.writability.isEnded else { return false }
                        box.value = value
                        return true
                    },
                    maxHeld: { token.statistics.maxPending })
            }
        }

        @Test(arguments: Shape.allCases, 0..<3)
        func producersFollowingTheirStateLoseNothingAndHearEveryChangeInOrder(shape: Shape, seed: Int) {
            let perProducer = scaled(2_000)
            let ending = Ending.allCases[seed % 3]
            let checker = OrderChecker()
            let queue = DispatchQueue(label: "WritabilityStressTests.consumer")
            let spin = AtomicValue<Int>(0)
            let consumed = AtomicValue<Int>(0)
            let subject = Self.subject(shape, on: queue) { values in
                for value in values {
                    // Slower than the producers by a random amount per element.
                    for _ in 0..<(value & 0xFF) { spin.add(1, ordering: .relaxed) }
                    checker.record(value)
                }
                consumed.add(values.count, ordering: .relaxed)
            }
            let follower = Follower()
            subject.handle.onWritabilityChange(on: .immediate) { follower.heard($0) }
            let accepted = AtomicValue<Int>(0)
            let stranded = AtomicValue<Int>(0)
            let sent = AtomicValue<Int>(0)
            var random = SplitMix64(seed: UInt64(seed) &* 104_729 &+ UInt64(shape.rawValue.count))
            let endAfter = Int.random(in: 0..<(Self.producers * perProducer), using: &random)
            let endDone = DispatchSemaphore(value: 0)
            Thread {
                if ending != .none {
                    _ = waitUntil(seconds: 120) { sent.load(ordering: .relaxed) >= endAfter }
                    if ending == .cancel { subject.handle.cancel() } else { subject.handle.finish() }
                }
                endDone.signal()
            }.start()

            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer {
                    if !follower.waitWhilePaused() {
                        stranded.add(1, ordering: .relaxed)
                        return
                    }
                    if follower.current?.isEnded == true { return }
                    guard subject.produce(stamp(producer, sequence)) else { return }
                    accepted.add(1, ordering: .relaxed)
                    sent.add(1, ordering: .relaxed)
                    // Paused by this or another producer's element: stop until told to go on (the
                    // state is read where it is decided; the handler hears it a moment later).
                    if subject.handle.writability == .paused,
                        !follower.waitUntilHeard(pauses: subject.handle.statistics.pauses)
                    {
                        stranded.add(1, ordering: .relaxed)
                        return
                    }
                }
            }
            #expect(wait(endDone))
            let acceptedCount = accepted.load(ordering: .relaxed)
            if ending != .cancel {
                subject.handle.finish()
                #expect(waitUntil(seconds: 120) { subject.handle.isFinished }, "everything accepted was delivered")
            }
            drainQueue(queue)
            #expect(waitUntil(seconds: 60) { follower.current?.isEnded == true }, "the end was heard")

            #expect(stranded.load(ordering: .relaxed) == 0, "a paused producer was never told to go on")
            // Every change once, in order: never the same twice in a row, the end once and last.
            let heard = follower.heard
            #expect(zip(heard, heard.dropFirst()).allSatisfy { $0 != $1 }, "\(heard.suffix(8))")
            #expect(heard.filter(\.isEnded).count == 1 && heard.last?.isEnded == true, "\(heard.suffix(4))")
            let statistics = subject.handle.statistics
            if shape != .observation {
                #expect(
                    heard.filter { $0 == .paused }.count == subject.handle.statistics.pauses, "each pause heard once")
            }
            let report = checker.report
            #expect(report.duplicatedOrReordered == 0, "\(report)")
            if shape.isLossless && ending != .cancel {
                // A write racing with a finish is kept by the property but not observed.
                if shape == .observation && ending == .finish {
                    #expect(report.received <= acceptedCount && report.gaps == 0, "\(report)")
                } else {
                    #expect(report.received == acceptedCount && report.gaps == 0, "nothing lost: \(report)")
                }
            }
            if ending == .none, shape.isLossless {
                #expect(statistics.dropped == 0)
            }
            // Producers that stop when paused keep what is held near `high`: each may have sent
            // one more before it heard the pause, and one drain of the stages may be under way.
            let held = subject.maxHeld()
            #expect(held <= 2 * Self.high + Self.producers, "held \(held) at most: \(statistics)")
        }
    }
}
