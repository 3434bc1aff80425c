import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// The stress suites, nested here so that they run one test at a time: each blocks a thread of
/// the cooperative pool (two on a 2-core machine) while its own threads hammer the library, and
/// two at once would leave the async tests and actor deliveries running meanwhile no thread.
@Suite(.serialized) enum Stress {}

extension Tag {
    /// Many threads, many changes: run again under ThreadSanitizer in CI.
    @Tag static var stress: Self
}

/// A model written by many threads at once.
final class Counter: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored properties are an @Observed and a Sendable let.
    @Observed var value = -1
    let lifetime: LifetimeWitness?

    init(lifetime: LifetimeWitness? = nil) {
        self.lifetime = lifetime
    }
}

extension Stress {
    /// The guarantees of the core, asserted under load: 4 producer threads × 100 000 changes each
    /// (scaled by `RECEPTIONIST_STRESS_SCALE`).
    @Suite(.serialized, .tags(.stress))
    struct StressTests {
        static let producers = 4

        enum TargetKind: String, CaseIterable, CustomTestStringConvertible {
            case serialQueue, concurrentQueue, operationQueue, immediate

            var testDescription: String { rawValue }

            func make() -> any DeliveryTarget {
                switch self {
                case .serialQueue: DispatchQueue(label: "stress.serial")
                case .concurrentQueue: DispatchQueue(label: "stress.concurrent", attributes: .concurrent)
                case .operationQueue:
                    {
                        let queue = OperationQueue()
                        queue.maxConcurrentOperationCount = 4
                        return queue
                    }()
                case .immediate: ImmediateTarget()
                }
            }
        }

        @Test(arguments: TargetKind.allCases)
        func losslessTrampolineDeliversEveryEventOnceInOrder(kind: TargetKind) {
            let perProducer = eventsPerThread(100_000)
            let total = Self.producers * perProducer
            let checker = OrderChecker()
            let running = AtomicValue<Int>(0)
            let overlaps = AtomicValue<Int>(0)
            let done = DispatchSemaphore(value: 0)
            let lifetimes = LifetimeCounter()
            let witness = LifetimeWitness(lifetimes)
            var receptionist: Receptionist<Int>? = Receptionist<Int>(on: kind.make()) { [witness] value in
                if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                witness.touch()
                checker.record(value)
                running.subtract(1, ordering: .acquiringAndReleasing)
                if checker.report.received == total { done.signal() }
            }
            _ = consume witness
            let sender = receptionist!
            let producersDone = AtomicValue<Int>(0)
            let snapshots = AtomicValue<Int>(0)
            let unbalanced = AtomicValue<Int>(0)
            onThreads(Self.producers + 1) { thread in
                guard thread < Self.producers else {
                    // A sampler: every snapshot, taken at any moment, accounts for every event.
                    while producersDone.load(ordering: .acquiring) < Self.producers {
                        let stats = sender.statistics
                        if stats.received != stats.delivered + stats.inFlight + stats.pending {
                            unbalanced.add(1, ordering: .relaxed)
                        }
                        snapshots.add(1, ordering: .relaxed)
                    }
                    return
                }
                for sequence in 0..<perProducer {
                    sender.send(stamp(thread, sequence))
                }
                producersDone.add(1, ordering: .releasing)
            }
            #expect(unbalanced.load(ordering: .relaxed) == 0, "of \(snapshots.load(ordering: .relaxed)) snapshots")
            #expect(wait(done), "every event delivered")
            sender.finish()
            #expect(waitUntil { sender.isFinished })
            let report = checker.report
            #expect(report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            #expect(overlaps.load(ordering: .relaxed) == 0, "task blocks never overlapped")
            let stats = sender.statistics
            #expect(stats.received == total)
            #expect(stats.delivered == total)
            #expect(stats.dropped == 0 && stats.discarded == 0 && stats.pending == 0)
            receptionist = nil
            #expect(lifetimes.deinitialized == 1, "the task block was released")
        }

        /// Drain budgets that are not a multiple of the buffer's segments (1, 7, 255, 1000 against
        /// 256-element segments), so that drains keep splitting segments while producers append to
        /// them: still every event once, in order, with the statistics balanced.
        @Test(arguments: [1, 7, 255, 1000])
        func drainsThatSplitSegmentsLoseNothingAndKeepOrder(budget: Int) {
            let perProducer = eventsPerThread(50_000)
            let total = Self.producers * perProducer
            let checker = OrderChecker()
            let done = DispatchSemaphore(value: 0)
            let target = DispatchQueue(label: "stress.split", attributes: .concurrent)
            let receptionist = Receptionist<Int>(on: target, drainBudget: budget) { value in
                checker.record(value)
                if checker.report.received == total { done.signal() }
            }
            let unbalanced = AtomicValue<Int>(0)
            onThreads(Self.producers) { thread in
                for sequence in 0..<perProducer {
                    receptionist.send(stamp(thread, sequence))
                    if sequence % 1_000 == 0 {
                        let stats = receptionist.statistics
                        if stats.received != stats.delivered + stats.inFlight + stats.pending {
                            unbalanced.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
            #expect(wait(done), "every event delivered")
            #expect(checker.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            #expect(unbalanced.load(ordering: .relaxed) == 0)
            receptionist.finish()
            #expect(waitUntil { receptionist.isFinished })
            let stats = receptionist.statistics
            #expect(stats.received == total && stats.delivered == total && stats.pending == 0 && stats.inFlight == 0)
        }

        @Test(arguments: TargetKind.allCases)
        func observedPropertyChangesFormOneConsistentChain(kind: TargetKind) {
            let perProducer = eventsPerThread(100_000)
            let total = Self.producers * perProducer
            let lifetimes = LifetimeCounter()
            var model: Counter? = Counter(lifetime: LifetimeWitness(lifetimes))
            struct Chain {
                var last = -1
                var breaks = 0
                var count = 0
            }
            let chain = Locked(uncounted: Chain())
            let checker = OrderChecker()
            let done = DispatchSemaphore(value: 0)
            let token = model!.receptionist(for: \.value).deliver(on: kind.make()) { change in
                checker.record(change.newValue)
                let count = chain.withLock { chain in
                    if change.oldValue != chain.last { chain.breaks += 1 }
                    chain.last = change.newValue
                    chain.count += 1
                    return chain.count
                }
                if count == total { done.signal() }
            }
            let writer = model!
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer {
                    writer.value = stamp(producer, sequence)
                }
            }
            #expect(wait(done))
            let final = chain.withLock { $0 }
            #expect(final.count == total)
            #expect(final.breaks == 0, "each old value is the previous new value")
            #expect(final.last == writer.value, "the last new value is the final value")
            #expect(checker.report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            model = nil
            _ = consume writer
            // The observation finishes from `ObservableModel`'s deinit, a moment before the subclass's
            // stored properties (the witness) are destroyed: wait for both.
            #expect(
                waitUntil { token.isFinished && lifetimes.deinitialized == 1 },
                "the model was deallocated and the observation ended")
            #expect(token.statistics.delivered == total)
        }

        @Test(arguments: 0..<12)
        func nothingStartsAfterCancelReturns(seed: Int) {
            var random = SplitMix64(seed: UInt64(seed))
            let perProducer = eventsPerThread(20_000)
            let cancellingProducer = Int.random(in: 0..<Self.producers, using: &random)
            let cancelAt = Int.random(in: 0..<perProducer, using: &random)
            let queue = DispatchQueue(label: "stress.cancel")
            let cancelReturned = AtomicValue<Bool>(false)
            let startedAfterCancel = AtomicValue<Int>(0)
            let started = AtomicValue<Int>(0)
            let accepted = AtomicValue<Int>(0)
            let lifetimes = LifetimeCounter()
            let witness = LifetimeWitness(lifetimes)
            let receptionist = Receptionist<Int>(on: queue) { [witness] _ in
                if cancelReturned.load(ordering: .acquiring) {
                    startedAfterCancel.add(1, ordering: .relaxed)
                }
                started.add(1, ordering: .relaxed)
                witness.touch()
            }
            _ = consume witness
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer {
                    if receptionist.send(stamp(producer, sequence)).isAccepted {
                        accepted.add(1, ordering: .relaxed)
                    }
                    if producer == cancellingProducer && sequence == cancelAt {
                        receptionist.cancel()
                        cancelReturned.store(true, ordering: .releasing)
                    }
                }
            }
            drainQueue(queue)
            drainQueue(queue)
            #expect(
                startedAfterCancel.load(ordering: .relaxed) <= 1,
                "at most the one block a drain had already committed to"
            )
            let stats = receptionist.statistics
            #expect(stats.received == accepted.load(ordering: .relaxed))
            #expect(stats.delivered == started.load(ordering: .relaxed))
            #expect(stats.received == stats.delivered + stats.discarded, "every accepted event accounted for")
            #expect(lifetimes.deinitialized == 1, "cancel released the task block")
        }

        /// On a serial target, a cancel made on the target's own queue cannot race a drain (none runs
        /// meanwhile): exactly nothing starts after it returns.
        @Test(arguments: 0..<8)
        func cancelOnTheSerialTargetQueueIsExact(seed: Int) {
            var random = SplitMix64(seed: UInt64(seed) &+ 200)
            let perProducer = eventsPerThread(20_000)
            let cancellingProducer = Int.random(in: 0..<Self.producers, using: &random)
            let cancelAt = Int.random(in: 0..<perProducer, using: &random)
            let queue = DispatchQueue(label: "stress.cancel.on-queue")
            let cancelReturned = AtomicValue<Bool>(false)
            let startedAfterCancel = AtomicValue<Int>(0)
            let started = AtomicValue<Int>(0)
            let receptionist = Receptionist<Int>(on: queue) { _ in
                if cancelReturned.load(ordering: .acquiring) {
                    startedAfterCancel.add(1, ordering: .relaxed)
                }
                started.add(1, ordering: .relaxed)
            }
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer {
                    receptionist.send(stamp(producer, sequence))
                    if producer == cancellingProducer && sequence == cancelAt {
                        queue.sync {
                            receptionist.cancel()
                            cancelReturned.store(true, ordering: .releasing)
                        }
                    }
                }
            }
            drainQueue(queue)
            #expect(startedAfterCancel.load(ordering: .relaxed) == 0, "nothing after a cancel on the target's queue")
            let stats = receptionist.statistics
            #expect(stats.delivered == started.load(ordering: .relaxed))
            #expect(stats.received == stats.delivered + stats.discarded, "every accepted event accounted for")
        }

        @Test(arguments: 0..<8)
        func cancelFromInsideTheTaskBlockIsExact(seed: Int) {
            var random = SplitMix64(seed: UInt64(seed) &+ 100)
            let perProducer = eventsPerThread(20_000)
            let stopAfter = Int.random(in: 1...(perProducer * Self.producers / 2), using: &random)
            let queue = DispatchQueue(label: "stress.cancel.inside", attributes: .concurrent)
            let holder = Locked<Receptionist<Int>?>(uncounted: nil)
            let delivered = AtomicValue<Int>(0)
            let receptionist = Receptionist<Int>(on: queue) { _ in
                if delivered.add(1, ordering: .relaxed).newValue == stopAfter {
                    holder.withLock { $0 }?.cancel()
                }
            }
            holder.withLock { $0 = receptionist }
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer {
                    receptionist.send(stamp(producer, sequence))
                }
            }
            queue.sync(flags: .barrier) {}
            #expect(delivered.load(ordering: .relaxed) == stopAfter)
            #expect(receptionist.statistics.delivered == stopAfter)
            holder.withLock { $0 = nil }
        }

        @Test(arguments: [BufferPolicy.dropOldest(capacity: 64), .dropNewest(capacity: 64)])
        func boundedBuffersAccountForEveryDrop(policy: BufferPolicy) {
            let perProducer = eventsPerThread(100_000)
            let total = Self.producers * perProducer
            let checker = OrderChecker()
            let queue = DispatchQueue(label: "stress.bounded")
            let receptionist = Receptionist<Int>(on: queue, buffering: policy) { value in
                checker.record(value)
            }
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer {
                    receptionist.send(stamp(producer, sequence))
                }
            }
            receptionist.finish()
            #expect(waitUntil { receptionist.isFinished })
            let stats = receptionist.statistics
            let report = checker.report
            #expect(stats.received == total)
            #expect(stats.delivered == report.received)
            #expect(stats.delivered + stats.dropped == total, "nothing lost without being counted")
            #expect(stats.maxPending <= 64)
            #expect(report.duplicatedOrReordered == 0, "drops never reorder")
            if policy == .dropOldest(capacity: 64) {
                // Nothing can evict the very last change accepted, so some producer's final change
                // is always delivered.
                let finals = (0..<Self.producers).filter { checker.lastSequence(of: $0) == perProducer - 1 }
                #expect(!finals.isEmpty)
            }
        }

        /// Observations are started and cancelled at random, from other threads and from inside
        /// their own task blocks, while writers hammer the property.
        @Test(arguments: 0..<4)
        func observationsComeAndGoDuringDelivery(seed: Int) {
            let writes = eventsPerThread(50_000)
            let churnRounds = scaled(400)
            let model = Counter()
            let lifetimes = LifetimeCounter()
            let created = AtomicValue<Int>(0)
            let probes = Locked<[Probe]>(uncounted: [])
            let targets: [any DeliveryTarget] = [
                DispatchQueue(label: "churn.a"),
                DispatchQueue(label: "churn.b", attributes: .concurrent),
                ImmediateTarget(),
            ]

            final class Probe: Sendable {
                // What one observation saw: its chain, and blocks that started after cancel returned.
                let cancelReturned = AtomicValue<Bool>(false)
                let startedAfterCancel = AtomicValue<Int>(0)
                let state = Locked<(last: Int?, breaks: Int)>(uncounted: (nil, 0))
            }

            onThreads(4) { thread in
                if thread < 2 {
                    for sequence in 0..<writes { model.value = stamp(thread, sequence) }
                    return
                }
                var random = SplitMix64(seed: UInt64(seed * 10 + thread))
                for _ in 0..<churnRounds {
                    let probe = Probe()
                    let witness = LifetimeWitness(lifetimes)
                    let cancelInside = Bool.random(using: &random)
                    let insideAfter = Int.random(in: 0..<50, using: &random)
                    let holder = Locked<ObservationToken?>(uncounted: nil)
                    let options: ObservationOptions = Bool.random(using: &random) ? [.initial, .old] : [.old]
                    let target = targets[Int.random(in: 0..<targets.count, using: &random)]
                    created.add(1, ordering: .relaxed)
                    let token = model.receptionist(for: \.value, options: options).deliver(on: target) {
                        [witness] change in
                        witness.touch()
                        if probe.cancelReturned.load(ordering: .acquiring) {
                            probe.startedAfterCancel.add(1, ordering: .relaxed)
                        }
                        probe.state.withLock { state in
                            if let last = state.last, change.oldValue != last { state.breaks += 1 }
                            state.last = change.newValue
                        }
                        if cancelInside && (change.newValue & 0xFFFF_FFFF) % 50 == insideAfter {
                            holder.withLock { $0 }?.cancel()
                        }
                    }
                    _ = consume witness
                    holder.withLock { $0 = token }
                    for _ in 0..<Int.random(in: 0..<200, using: &random) { _ = model.value }
                    token.cancel()
                    probe.cancelReturned.store(true, ordering: .releasing)
                    holder.withLock { $0 = nil }
                    probes.withLock { $0.append(probe) }
                }
            }
            for case let queue as DispatchQueue in targets { queue.sync(flags: .barrier) {} }
            // Every target is quiet now: late starts would have happened.
            let all = probes.withLock { $0 }
            #expect(all.count == created.load(ordering: .relaxed))
            #expect(all.map { $0.state.withLock { $0.breaks } }.reduce(0, +) == 0, "each observation saw a chain")
            #expect(
                all.allSatisfy { $0.startedAfterCancel.load(ordering: .relaxed) <= 1 },
                "at most one in-flight block started after cancel returned"
            )
            #expect(model.$value.observerCount == 0, "every cancelled observation detached")
            #expect(
                waitUntil { lifetimes.deinitialized == created.load(ordering: .relaxed) },
                "every task block was released"
            )
        }
    }
}
