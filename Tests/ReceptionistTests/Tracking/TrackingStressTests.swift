import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// Trackings of a model written by 4 threads at once: the last value is always delivered, reads
    /// never overlap, and at most one read waits at a time.
    @Suite(.serialized, .tags(.stress))
    struct TrackingStressTests {
        static let writers = 4

        /// Records what the task block saw, and checks it ran one value at a time.
        final class Deliveries: Sendable {
            private let values = Locked<[Int]>(uncounted: [])
            private let running = AtomicValue<Int>(0)
            private let overlaps = AtomicValue<Int>(0)

            func record(_ value: Int) {
                if running.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                values.withLock { $0.append(value) }
                running.subtract(1, ordering: .acquiringAndReleasing)
            }

            var last: Int? { values.withLock { $0.last } }
            var all: [Int] { values.withLock { $0 } }
            var overlapCount: Int { overlaps.load(ordering: .relaxed) }
        }

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
        enum Delivery: String, CaseIterable, CustomTestStringConvertible {
            case serialQueue, concurrentQueue, mainActor

            var testDescription: String { rawValue }

            func start(_ model: TrackingCounter, _ deliveries: Deliveries) -> ObservationToken {
                let tracked = Receptionist.tracking(\.count, of: model, options: .initial)
                switch self {
                case .serialQueue:
                    return tracked.deliver(on: DispatchQueue(label: "tracking.stress.serial")) { deliveries.record($0) }
                case .concurrentQueue:
                    let queue = DispatchQueue(label: "tracking.stress.concurrent", attributes: .concurrent)
                    return tracked.deliver(on: queue) { deliveries.record($0) }
                case .mainActor:
                    return tracked.deliver(on: .mainActor) { deliveries.record($0) }
                }
            }
        }

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
        @Test(arguments: Delivery.allCases)
        func incrementsFromFourThreadsEndWithTheFinalCount(delivery: Delivery) {
            let perWriter = eventsPerThread(20_000)
            let model = TrackingCounter()
            let deliveries = Deliveries()
            let token = delivery.start(model, deliveries)
            onThreads(Self.writers) { _ in
                for _ in 0..<perWriter { model.increment() }
            }
            let final = Self.writers * perWriter
            #expect(model.count == final)
            #expect(waitUntil(seconds: 60) { deliveries.last == final })
            let values = deliveries.all
            // Each read happens after the previous one, of a count that only grows.
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
            #expect(deliveries.overlapCount == 0)
            #expect(token.statistics.maxPending <= 1)
            token.cancel()
        }

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
        @Test func burstsOfWritesFromFourThreadsEachEndWithTheLastOne() {
            // Many short bursts: each one's last write is a new chance to land in the window between
            // a read and the arming of the next report (see TrackedProperty).
            let rounds = scaled(300)
            let perWriter = 200
            let model = TrackingCounter()
            let deliveries = Deliveries()
            let queue = DispatchQueue(label: "tracking.stress.writes")
            let token = Receptionist.tracking(\.count, of: model).deliver(on: queue) { deliveries.record($0) }
            for round in 0..<rounds {
                onThreads(Self.writers) { writer in
                    for index in 0..<perWriter { model.count = stamp(writer, round * perWriter + index) }
                }
                let final = model.count  // whichever write came last; every value is distinct
                let delivered = waitUntil(seconds: 60) { deliveries.last == final }
                #expect(delivered, "round \(round): the last write, \(final), was not delivered")
                if !delivered { break }
            }
            #expect(deliveries.overlapCount == 0)
            #expect(token.statistics.maxPending <= 1)
            token.cancel()
        }

        @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
        @Test func noTaskBlockStartsOnceCancelReturnedAndTheRunningOneEnded() {
            let model = TrackingCounter()
            let deliveries = Deliveries()
            let lifetimes = LifetimeCounter()
            let witness = LifetimeWitness(lifetimes)
            let queue = DispatchQueue(label: "tracking.stress.cancel")
            let token = Receptionist.tracking(\.count, of: model, options: .initial).deliver(on: queue) {
                [witness] value in
                witness.touch()
                deliveries.record(value)
            }
            _ = consume witness
            let perWriter = eventsPerThread(20_000)
            let cancelled = AtomicValue<Bool>(false)
            onThreads(Self.writers + 1) { thread in
                if thread == Self.writers {
                    // The canceller: waits for some deliveries, then cancels while the writers write.
                    _ = waitUntil(seconds: 60) { deliveries.all.count >= 10 || model.count >= perWriter }
                    token.cancel()
                    cancelled.store(true, ordering: .releasing)
                    return
                }
                for _ in 0..<perWriter { model.increment() }
            }
            let didCancel = cancelled.load(ordering: .acquiring)
            #expect(didCancel)
            drainQueue(queue)  // a task block started before cancel returned has ended
            let count = deliveries.all.count
            for _ in 0..<100 { model.increment() }
            drainQueue(queue)
            #expect(deliveries.all.count == count)
            #expect(token.isCancelled)
            #expect(lifetimes.deinitialized == 1)
        }
    }
}
