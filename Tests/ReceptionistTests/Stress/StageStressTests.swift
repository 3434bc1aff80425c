import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// The guarantees of staged pipelines, asserted under load: 4 producer threads, real queues,
    /// the default timer queue (sizes scaled by `RECEPTIONIST_STRESS_SCALE`).
    @Suite(.serialized, .tags(.stress))
    struct StageStressTests {
        static let producers = StressTests.producers

        // MARK: - (a) filter → batch(count:): lossless

        @Test(arguments: StressTests.TargetKind.allCases)
        func filteredBatchesDeliverEveryIncludedEventOnceInOrder(kind: StressTests.TargetKind) {
            let perProducer = eventsPerThread(12_000)
            let size = 32
            let included: @Sendable (Int) -> Bool = { ($0 & 0xFFFF_FFFF) % 5 != 0 }
            let expected = (0..<perProducer).filter(included)
            let total = Self.producers * expected.count
            struct Log {
                var sequences: [Int: [Int]] = [:]
                var batchSizes: [Int] = []
            }
            let log = Locked(uncounted: Log())
            let guardrail = OverlapGuard()
            let target = kind.make()
            let receptionist = Receptionist.pipeline(of: Int.self)
                .filter(included)
                .batch(count: size)
                .deliver(on: target) { batch in
                    guardrail.run {
                        log.withLock { log in
                            log.batchSizes.append(batch.count)
                            for value in batch { log.sequences[value >> 32, default: []].append(value & 0xFFFF_FFFF) }
                        }
                    }
                }
            let producersDone = AtomicValue<Int>(0)
            let unbalanced = AtomicValue<Int>(0)
            onThreads(Self.producers + 1) { thread in
                guard thread < Self.producers else {
                    // A sampler: every snapshot, taken at any moment, accounts for every batch.
                    while producersDone.load(ordering: .acquiring) < Self.producers {
                        if !receptionist.statistics.isBalanced { unbalanced.add(1, ordering: .relaxed) }
                    }
                    return
                }
                for sequence in 0..<perProducer { receptionist.send(stamp(thread, sequence)) }
                producersDone.add(1, ordering: .releasing)
            }
            receptionist.finish()
            #expect(waitUntil(seconds: 120) { receptionist.isFinished })
            let final = log.withLock { $0 }
            for producer in 0..<Self.producers {
                let sequences = final.sequences[producer] ?? []
                #expect(sequences.count == expected.count, "producer \(producer): each included event once")
                #expect(sequences == expected, "producer \(producer): in sending order")
            }
            #expect(final.batchSizes.reduce(0, +) == total)
            #expect(
                final.batchSizes.dropLast().allSatisfy { $0 == size }, "only the batch finish closed may be partial")
            #expect(final.batchSizes.last.map { (1...size).contains($0) } == true)
            #expect(guardrail.overlaps == 0, "task blocks never overlapped")
            #expect(unbalanced.load(ordering: .relaxed) == 0, "every statistics snapshot balanced")
            let stats = receptionist.statistics
            #expect(stats.received == final.batchSizes.count && stats.delivered == final.batchSizes.count, "\(stats)")
            #expect(stats.isBalanced && stats.pending == 0 && stats.inFlight == 0 && stats.discarded == 0)
        }

        // MARK: - (b) coalesced observed property, slow consumer

        enum CoalesceShape: String, CaseIterable, CustomTestStringConvertible {
            /// `coalesce()` straight on the property: the delivery receptionist is the sink.
            case direct
            /// `removeDuplicates().coalesce()`: changes pass a staged pipeline's intake first.
            case afterRemoveDuplicates

            var testDescription: String { rawValue }
        }

        @Test(arguments: CoalesceShape.allCases)
        func coalescedChangesKeepTheChainAndAccountForEveryChange(shape: CoalesceShape) {
            let perProducer = eventsPerThread(10_000)
            let total = Self.producers * perProducer
            let model = Counter()
            let queue = DispatchQueue(label: "stage.stress.coalesce")
            struct Chain {
                var last = -1
                var breaks = 0
                var deliveries = 0
                var changes = 0
            }
            let chain = Locked(uncounted: Chain())
            let handler: @Sendable (ObservedChange<Counter, Int>) -> Void = { change in
                // A slow consumer, so that changes pile up and are folded (not needed for correctness).
                usleep(20)
                chain.withLock { chain in
                    if change.oldValue != chain.last { chain.breaks += 1 }
                    chain.last = change.newValue
                    chain.deliveries += 1
                    chain.changes += change.coalescedCount
                }
            }
            let observation = model.receptionist(for: \.value)
            let token =
                switch shape {
                case .direct: observation.coalesce().deliver(on: queue, handler)
                case .afterRemoveDuplicates: observation.removeDuplicates().coalesce().deliver(on: queue, handler)
                }
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer { model.value = stamp(producer, sequence) }
            }
            token.finish()
            #expect(waitUntil(seconds: 120) { token.isFinished })
            let final = chain.withLock { $0 }
            #expect(final.breaks == 0, "each old value is the previous new value")
            #expect(final.last == model.value, "the final value was delivered")
            #expect(final.changes == total, "the coalesced counts add up to the number of changes")
            let stats = token.statistics
            #expect(stats.received == total && stats.delivered == final.deliveries, "\(stats)")
            #expect(stats.coalesced == total - final.deliveries, "\(stats)")
            #expect(stats.isBalanced && stats.pending == 0 && stats.inFlight == 0, "\(stats)")
        }

        // MARK: - (c) time-based stages on the default scheduler, then finish

        enum TimedShape: String, CaseIterable, CustomTestStringConvertible {
            case throttleLatest, debounce, batchByTime

            var testDescription: String { rawValue }
        }

        @Test(arguments: TimedShape.allCases, StressTests.TargetKind.allCases)
        func timedStagesKeepOrderAndDeliverTheLastStateOnFinish(shape: TimedShape, kind: StressTests.TargetKind) {
            let perProducer = eventsPerThread(5_000)
            let total = Self.producers * perProducer
            let intakeOrder = IntakeOrder()
            let indexed = Receptionist.pipeline(of: Int.self).map { intakeOrder.next($0) }
            let pipeline: Pipeline<ReceptionistInput<Int>, [Indexed]> =
                switch shape {
                case .throttleLatest: indexed.throttle(for: .microseconds(500), latest: true).map { [$0] }
                case .debounce: indexed.debounce(for: .microseconds(200)).map { [$0] }
                case .batchByTime: indexed.batch(every: .microseconds(500))
                }
            let log = DeliveryLog()
            let guardrail = OverlapGuard()
            let receptionist = pipeline.deliver(on: kind.make()) { outputs in
                guardrail.run { log.record(outputs) }
            }
            onThreads(Self.producers) { producer in
                for sequence in 0..<perProducer { receptionist.send(stamp(producer, sequence)) }
            }
            receptionist.finish()
            #expect(waitUntil(seconds: 120) { receptionist.isFinished })
            let report = log.report
            #expect(intakeOrder.count == total)
            #expect(report.reorderedOrDuplicated == 0, "outputs in intake order, none twice")
            #expect(report.emptyBatches == 0)
            #expect(report.stamps.duplicatedOrReordered == 0, "each producer's order kept")
            #expect(report.lastIndex == total - 1, "the last state was delivered on finish")
            if shape == .batchByTime {
                #expect(report.outputs == total, "batching loses nothing")
                #expect(report.stamps == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            }
            #expect(guardrail.overlaps == 0)
            let stats = receptionist.statistics
            #expect(stats.isBalanced && stats.received == stats.delivered && stats.pending == 0, "\(stats)")
        }

        // MARK: - (e) batching by content: one batch per run of one producer's events

        enum ContentForm: String, CaseIterable, CustomTestStringConvertible {
            /// `batch(by:)` with the producer as the key.
            case byKey
            /// `batch(while:)` with "the same producer" as the predicate.
            case whilePredicate

            var testDescription: String { rawValue }
        }

        /// Four producers interleave (so runs are short and irregular) and flush now and then; the
        /// batches close by producer, by count (16) and by time (300 µs) on the default timer queue.
        @Test(arguments: ContentForm.allCases, StressTests.TargetKind.allCases)
        func batchesByContentLoseNothingKeepOrderAndHoldOneRunEach(form: ContentForm, kind: StressTests.TargetKind) {
            let perProducer = eventsPerThread(5_000)
            let total = Self.producers * perProducer
            let size = 16
            let intakeOrder = IntakeOrder()
            let indexed = Receptionist.pipeline(of: Int.self).map { intakeOrder.next($0) }
            let producer: @Sendable (Indexed) -> Int = { $0.stamp >> 32 }
            let pipeline =
                switch form {
                case .byKey: indexed.batch(by: producer, count: size, every: .microseconds(300))
                case .whilePredicate:
                    indexed.batch(while: { producer($0) == producer($1) }, count: size, every: .microseconds(300))
                }
            let log = DeliveryLog()
            let guardrail = OverlapGuard()
            let mixed = AtomicValue<Int>(0)
            let broken = AtomicValue<Int>(0)
            let oversized = AtomicValue<Int>(0)
            let receptionist = pipeline.deliver(on: kind.make()) { batch in
                guardrail.run {
                    if batch.contains(where: { producer($0) != producer(batch[0]) }) {
                        mixed.add(1, ordering: .relaxed)
                    }
                    if zip(batch, batch.dropFirst()).contains(where: { $1.index != $0.index + 1 }) {
                        broken.add(1, ordering: .relaxed)
                    }
                    if batch.count > size { oversized.add(1, ordering: .relaxed) }
                    log.record(batch)
                }
            }
            onThreads(Self.producers) { thread in
                var random = SplitMix64(seed: UInt64(thread) &+ 31)
                for sequence in 0..<perProducer {
                    if Int.random(in: 0..<100, using: &random) == 0 { receptionist.flush() }
                    receptionist.send(stamp(thread, sequence))
                }
            }
            receptionist.finish()
            #expect(waitUntil(seconds: 120) { receptionist.isFinished })
            let report = log.report
            #expect(intakeOrder.count == total)
            #expect(report.outputs == total, "batching loses nothing")
            #expect(report.reorderedOrDuplicated == 0, "batches in intake order, none twice")
            #expect(report.stamps == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0))
            #expect(report.emptyBatches == 0)
            #expect(report.lastIndex == total - 1, "the open batch was handed on by finish")
            #expect(mixed.load(ordering: .relaxed) == 0, "each batch holds one producer's events")
            #expect(broken.load(ordering: .relaxed) == 0, "each batch is a run of consecutive events")
            #expect(oversized.load(ordering: .relaxed) == 0, "no batch above the count")
            #expect(guardrail.overlaps == 0)
            let stats = receptionist.statistics
            #expect(stats.isBalanced && stats.received == stats.delivered && stats.pending == 0, "\(stats)")
        }

        // MARK: - (d) random interleavings of send, flush, cancel and finish

        enum Shape: CaseIterable {
            case batch, throttle, debounce
        }

        /// Four threads send, flush, and (one each, at random points) finish and cancel, while the
        /// task block may cancel from inside; the shape of the pipeline and the target vary with the
        /// seed.
        @Test(arguments: 0..<12)
        func randomInterleavingsOfSendFlushCancelAndFinish(seed: Int) {
            var random = SplitMix64(seed: UInt64(seed) &+ 7_000)
            let shape = Shape.allCases[seed % Shape.allCases.count]
            let kind = StressTests.TargetKind.allCases[seed % StressTests.TargetKind.allCases.count]
            let operations = scaled(4_000)
            let size = Int.random(in: 1...16, using: &random)
            let finisher = Int.random(in: 0..<Self.producers, using: &random)
            let finishAt =
                Int.random(in: 0..<4, using: &random) > 0 ? Int.random(in: 0..<operations, using: &random) : nil
            let canceller = Int.random(in: 0..<Self.producers, using: &random)
            let cancelAt = Bool.random(using: &random) ? Int.random(in: 0..<operations, using: &random) : nil
            let cancelInsideAt =
                Int.random(in: 0..<3, using: &random) == 0
                ? Int.random(in: 1...max(1, operations / 4), using: &random) : nil
            let scenario =
                "\(shape), \(kind), size \(size), finish \(finishAt.map { "by \(finisher) at \($0)" } ?? "none"), "
                + "cancel \(cancelAt.map { "by \(canceller) at \($0)" } ?? "none"), "
                + "cancel inside at delivery \(cancelInsideAt.map(String.init) ?? "none")"

            let intakeOrder = IntakeOrder()
            let indexed = Receptionist.pipeline(of: Int.self).map { intakeOrder.next($0) }
            let pipeline: Pipeline<ReceptionistInput<Int>, [Indexed]> =
                switch shape {
                case .batch: indexed.batch(count: size, every: .microseconds(500))
                case .throttle: indexed.throttle(for: .microseconds(300), latest: true).map { [$0] }
                case .debounce: indexed.debounce(for: .microseconds(200)).map { [$0] }
                }
            let target = kind.make()
            let log = DeliveryLog()
            let guardrail = OverlapGuard()
            let cancelledOutside = AtomicValue<Bool>(false)
            let cancelledInside = AtomicValue<Bool>(false)
            let startedAfterOutsideCancel = AtomicValue<Int>(0)
            let startedAfterInsideCancel = AtomicValue<Int>(0)
            let oversized = AtomicValue<Int>(0)
            let deliveries = AtomicValue<Int>(0)
            let holder = Locked<Receptionist<Int>?>(uncounted: nil)
            let lifetimes = LifetimeCounter()
            let witness = LifetimeWitness(lifetimes)
            let receptionist = pipeline.deliver(on: target) { [witness] outputs in
                // Read first: a block that starts after a cancel returned reads `true`.
                let afterOutside = cancelledOutside.load(ordering: .acquiring)
                let afterInside = cancelledInside.load(ordering: .acquiring)
                guardrail.run {
                    witness.touch()
                    if afterOutside { startedAfterOutsideCancel.add(1, ordering: .relaxed) }
                    if afterInside { startedAfterInsideCancel.add(1, ordering: .relaxed) }
                    if outputs.count > size { oversized.add(1, ordering: .relaxed) }
                    log.record(outputs)
                    if deliveries.add(1, ordering: .relaxed).newValue == cancelInsideAt {
                        holder.withLock { $0 }?.cancel()
                        cancelledInside.store(true, ordering: .releasing)
                    }
                }
            }
            _ = consume witness
            holder.withLock { $0 = receptionist }
            let accepted = Locked<[Int]>(uncounted: Array(repeating: 0, count: Self.producers))
            onThreads(Self.producers) { thread in
                var random = SplitMix64(seed: UInt64(seed) &* 31 &+ UInt64(thread))
                var sequence = 0
                for operation in 0..<operations {
                    if thread == canceller && operation == cancelAt {
                        receptionist.cancel()
                        cancelledOutside.store(true, ordering: .releasing)
                    }
                    if thread == finisher && operation == finishAt { receptionist.finish() }
                    if Int.random(in: 0..<100, using: &random) < 3 {
                        receptionist.flush()
                    } else if receptionist.send(stamp(thread, sequence)).isAccepted {
                        // Once a send is rejected, every later one is: accepted stamps are 0..<sequence.
                        sequence += 1
                    }
                }
                accepted.withLock { $0[thread] = sequence }
            }
            receptionist.finish()
            let pipelineDelivery = receptionist.deliveryControl
            #expect(
                waitUntil(seconds: 120) { receptionist.isFinished || pipelineDelivery.isCancelled },
                "the pipeline ended: \(scenario)"
            )
            quiesce(target, receptionist)
            let cancelled = pipelineDelivery.isCancelled
            #expect(
                receptionist.isCancelled == cancelled,
                "isCancelled reports whether cancel stopped the pipeline: \(scenario)"
            )
            #expect(!receptionist.send(0).isAccepted, "an ended pipeline rejects sends")

            let report = log.report
            #expect(
                startedAfterOutsideCancel.load(ordering: .relaxed) <= 1,
                "at most the block already started: \(scenario)"
            )
            #expect(
                startedAfterInsideCancel.load(ordering: .relaxed) == 0, "nothing after a cancel inside: \(scenario)")
            #expect(report.reorderedOrDuplicated == 0, "in intake order, none twice: \(scenario)")
            #expect(report.stamps.duplicatedOrReordered == 0, "each producer's order kept: \(scenario)")
            #expect(report.emptyBatches == 0 && oversized.load(ordering: .relaxed) == 0, "batch sizes: \(scenario)")
            #expect(guardrail.overlaps == 0, "task blocks never overlapped: \(scenario)")
            let stats = receptionist.statistics
            #expect(stats.isBalanced, "\(stats): \(scenario)")
            #expect(stats.pending == 0 && stats.inFlight == 0, "quiescent: \(stats): \(scenario)")
            #expect(stats.delivered == deliveries.load(ordering: .relaxed), "\(stats): \(scenario)")
            if !cancelled {
                // Finished: nothing was lost.
                let acceptedTotal = accepted.withLock { $0 }.reduce(0, +)
                #expect(intakeOrder.count == acceptedTotal, "every accepted event entered the stages: \(scenario)")
                #expect(stats.discarded == 0, "\(stats): \(scenario)")
                #expect(report.lastIndex == acceptedTotal - 1, "the last state was delivered: \(scenario)")
                if shape == .batch {
                    let lossless = OrderChecker.Report(received: acceptedTotal, duplicatedOrReordered: 0, gaps: 0)
                    #expect(report.stamps == lossless, "every accepted event once: \(scenario)")
                }
            }
            holder.withLock { $0 = nil }
            #expect(
                waitUntil(seconds: 60) { lifetimes.deinitialized == 1 },
                "the task block was released: \(scenario)"
            )
        }
    }
}

extension Stress.StageStressTests {
    // MARK: - (e) finish racing with cancel

    /// `finish()` and `cancel()` race while outputs are still waiting for a slow target (even
    /// seeds cancel only once `finish()` returned): the pipeline must end one way or the other,
    /// and say which.
    @Test(arguments: 0..<8)
    func finishRacingWithCancelEndsExactlyOneWay(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed) &+ 9_000)
        let perProducer = eventsPerThread(2_500)
        let total = Self.producers * perProducer
        let cancelAfterFinish = seed % 2 == 0
        let cancelDelay = Int.random(in: 0..<20_000, using: &random)
        let queue = DispatchQueue(label: "stage.stress.finish-cancel")
        let checker = OrderChecker()
        let cancelReturned = AtomicValue<Bool>(false)
        let startedAfterCancel = AtomicValue<Int>(0)
        let receptionist = Receptionist.pipeline(of: Int.self)
            .filter { _ in true }
            .deliver(on: queue) { value in
                if cancelReturned.load(ordering: .acquiring) { startedAfterCancel.add(1, ordering: .relaxed) }
                checker.record(value)
            }
        onThreads(Self.producers) { producer in
            for sequence in 0..<perProducer { receptionist.send(stamp(producer, sequence)) }
        }
        // A burst may still be going through the stages on the library's stage queue: let every
        // event reach the delivery buffer, so the race is between finish and cancel only.
        #expect(waitUntil(seconds: 120) { receptionist.statistics.received == total })
        let finishReturned = DispatchSemaphore(value: 0)
        let spin = AtomicValue<Int>(0)
        onThreads(2) { thread in
            if thread == 0 {
                if cancelAfterFinish { _ = wait(finishReturned) }
                for _ in 0..<cancelDelay { spin.add(1, ordering: .relaxed) }
                receptionist.cancel()
                cancelReturned.store(true, ordering: .releasing)
            } else {
                receptionist.finish()
                finishReturned.signal()
            }
        }
        let delivery = receptionist.deliveryControl
        #expect(waitUntil(seconds: 120) { delivery.isFinished || delivery.isCancelled })
        drainQueue(queue)
        drainQueue(queue)
        let order = cancelAfterFinish ? "after finish returned" : "racing finish"
        let scenario = "seed \(seed), cancel \(order), delay \(cancelDelay)"
        let stats = receptionist.statistics
        // Whichever won, the receptionist reports it, and only it.
        #expect(
            receptionist.isCancelled != receptionist.isFinished,
            "isCancelled \(receptionist.isCancelled), isFinished \(receptionist.isFinished), \(stats): \(scenario)"
        )
        #expect(receptionist.isCancelled == delivery.isCancelled, "\(stats): \(scenario)")
        #expect(startedAfterCancel.load(ordering: .relaxed) <= 1, "at most the block already started: \(scenario)")
        let report = checker.report
        #expect(report.duplicatedOrReordered == 0, "\(scenario)")
        #expect(stats.received == total && stats.delivered == report.received, "\(stats): \(scenario)")
        #expect(stats.delivered + stats.discarded == total, "\(stats): \(scenario)")
        if delivery.isFinished {
            #expect(report == OrderChecker.Report(received: total, duplicatedOrReordered: 0, gaps: 0), "\(scenario)")
        }
    }
}

// MARK: - Helpers

extension ReceptionistStatistics {
    /// The identity every snapshot satisfies.
    fileprivate var isBalanced: Bool {
        received == delivered + inFlight + dropped + discarded + coalesced + pending
    }
}

extension Stress.StageStressTests {
    /// An event with its position in the pipeline's intake order.
    struct Indexed: Sendable, Equatable {
        let index: Int
        let stamp: Int
    }

    /// Numbers events in the order a pipeline's stages see them (stages run one event at a time).
    final class IntakeOrder: Sendable {
        private let counter = Locked(uncounted: 0)

        func next(_ stamp: Int) -> Indexed {
            counter.withLock { count in
                defer { count += 1 }
                return Indexed(index: count, stamp: stamp)
            }
        }

        var count: Int { counter.withLock { $0 } }
    }

    /// What task blocks received: outputs must come in intake order, each at most once.
    final class DeliveryLog: Sendable {
        struct Report {
            var outputs = 0
            var lastIndex = -1
            var reorderedOrDuplicated = 0
            var emptyBatches = 0
            var stamps = OrderChecker.Report()
        }

        private let state = Locked(uncounted: Report())
        private let checker = OrderChecker()

        func record(_ outputs: [Indexed]) {
            state.withLock { report in
                if outputs.isEmpty { report.emptyBatches += 1 }
                for output in outputs {
                    if output.index <= report.lastIndex { report.reorderedOrDuplicated += 1 }
                    report.lastIndex = max(report.lastIndex, output.index)
                    report.outputs += 1
                }
            }
            for output in outputs { checker.record(output.stamp) }
        }

        var report: Report {
            var report = state.withLock { $0 }
            report.stamps = checker.report
            return report
        }
    }

    /// Counts task blocks that ran while another was running.
    final class OverlapGuard: Sendable {
        private let running = AtomicValue<Int>(0)
        private let overlapCount = AtomicValue<Int>(0)

        func run(_ body: () -> Void) {
            if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 {
                overlapCount.add(1, ordering: .relaxed)
            }
            body()
            running.subtract(1, ordering: .acquiringAndReleasing)
        }

        var overlaps: Int { overlapCount.load(ordering: .relaxed) }
    }
}

/// Waits until nothing more can run: the pipeline's default timer queues and `target` have run
/// everything submitted so far, twice (a drain running during the first round may resubmit
/// itself).
private func quiesce<Event>(_ target: any DeliveryTarget, _ receptionist: Receptionist<Event>) {
    let timerQueues = receptionist.stagedPipeline?.defaultTimerQueues ?? []
    for _ in 0..<2 {
        for queue in timerQueues { drainQueue(queue) }
        switch target {
        case let queue as DispatchQueue: queue.sync(flags: .barrier) {}
        case let queue as OperationQueue: queue.waitUntilAllOperationsAreFinished()
        default: break
        }
    }
}
