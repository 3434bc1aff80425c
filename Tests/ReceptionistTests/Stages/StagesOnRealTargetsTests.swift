import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Each stage once over every kind of real delivery target, with the default timer queue (no
/// `scheduler:`): bounded waits, and only invariants that hold whatever the timing (nothing lost
/// where nothing may be, order, the last state after `flush()` / `finish()`, batch sizes, every
/// task block on its target and never two at once). Timing itself is tested on a
/// `ManualScheduler` elsewhere.
@Suite struct StagesOnRealTargetsTests {
    /// Events each test sends (per producer where there are two).
    static let count = 2_000

    enum Target: String, CaseIterable, CustomTestStringConvertible {
        case serialQueue, concurrentQueue, serialOperationQueue, concurrentOperationQueue, mainActor

        var testDescription: String { rawValue }
    }

    // MARK: - Stateless stages

    @Test(arguments: Target.allCases)
    func filterPassesExactlyTheIncludedEventsInOrder(target: Target) {
        let seen = Recorder<Int>()
        let included: @Sendable (Int) -> Bool = { ($0 & 0xFFFF_FFFF) % 3 != 0 }
        let (receptionist, probe) = start(Receptionist.pipeline(of: Int.self).filter(included), on: target) {
            seen.append($0)
        }
        sendStamped(to: receptionist, producers: 2)
        finishAndWait(receptionist)
        let expected = (0..<Self.count).filter(included)
        for (producer, sequences) in sequencesByProducer(seen.values, producers: 2) {
            #expect(sequences == expected, "producer \(producer)")
        }
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: 2 * expected.count)
    }

    @Test(arguments: Target.allCases)
    func removeDuplicatesDropsOnlyRepeatsOfThePreviousEvent(target: Target) {
        // Runs of 1 to 3 equal values; 0 comes back every 7th run, so some equal values are
        // not adjacent and must pass.
        let input = (1...Self.count).flatMap { index in
            Array(repeating: index % 7 == 0 ? 0 : index, count: index % 3 + 1)
        }
        let expected = input.enumerated().filter { $0.offset == 0 || input[$0.offset - 1] != $0.element }.map(\.element)
        let seen = Recorder<Int>()
        let (receptionist, probe) = start(Receptionist.pipeline(of: Int.self).removeDuplicates(), on: target) {
            seen.append($0)
        }
        onThreads(1) { _ in for value in input { receptionist.send(value) } }
        finishAndWait(receptionist)
        #expect(seen.values == expected)
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: expected.count)
    }

    // MARK: - Coalesce

    /// The first task block holds the target until every other event was sent, so the rest is
    /// folded into exactly one delivery, whatever the timing.
    @Test(arguments: Target.allCases)
    func coalesceFoldsEverythingSentWhileTheTaskBlockIsBusy(target: Target) {
        let seen = Recorder<Coalesced<Int>>()
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let (receptionist, probe) = start(Receptionist.pipeline(of: Int.self).coalesce(), on: target) { output in
            seen.append(output)
            if output.latest == 0 {
                started.signal()
                _ = wait(release)
            }
        }
        receptionist.send(0)
        #expect(wait(started), "the first event reached the task block")
        onThreads(1) { _ in for value in 1..<Self.count { receptionist.send(value) } }
        release.signal()
        finishAndWait(receptionist)
        #expect(
            seen.values == [Coalesced(latest: 0, count: 1), Coalesced(latest: Self.count - 1, count: Self.count - 1)]
        )
        probe.expectOneAtATimeOnTarget()
        let stats = receptionist.statistics
        #expect(stats.received == Self.count)
        #expect(stats.coalesced == Self.count - 2)
        expectBalanced(stats, delivered: 2)
    }

    // MARK: - Batch

    @Test(arguments: Target.allCases)
    func batchByCountDeliversEveryEventInFullBatches(target: Target) {
        let size = 7
        let batches = Recorder<[Int]>()
        let (receptionist, probe) = start(Receptionist.pipeline(of: Int.self).batch(count: size), on: target) {
            batches.append($0)
        }
        sendStamped(to: receptionist, producers: 2)
        finishAndWait(receptionist)
        let all = batches.values
        #expect(all.dropLast().allSatisfy { $0.count == size }, "only the last batch may be partial")
        #expect(all.last.map { (1...size).contains($0.count) } == true)
        expectEveryStampedEventInOrder(all.flatMap { $0 }, producers: 2)
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: all.count)
    }

    @Test(arguments: Target.allCases)
    func batchByTimeDeliversEveryEventAfterFlush(target: Target) {
        let batches = Recorder<[Int]>()
        let (receptionist, probe) = start(
            Receptionist.pipeline(of: Int.self).batch(every: .milliseconds(1)),
            on: target
        ) { batches.append($0) }
        sendStamped(to: receptionist, producers: 2)
        receptionist.flush()
        #expect(
            waitUntil(seconds: 60) { batches.values.reduce(0) { $0 + $1.count } == 2 * Self.count },
            "flush handed on the open batch without finishing"
        )
        finishAndWait(receptionist)
        let all = batches.values
        #expect(all.allSatisfy { !$0.isEmpty })
        expectEveryStampedEventInOrder(all.flatMap { $0 }, producers: 2)
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: all.count)
    }

    @Test(arguments: Target.allCases)
    func batchByCountOrTimeDeliversEveryEventInBoundedBatches(target: Target) {
        let size = 16
        let batches = Recorder<[Int]>()
        let (receptionist, probe) = start(
            Receptionist.pipeline(of: Int.self).batch(count: size, every: .milliseconds(1)),
            on: target
        ) { batches.append($0) }
        sendStamped(to: receptionist, producers: 2)
        finishAndWait(receptionist)
        let all = batches.values
        #expect(all.allSatisfy { (1...size).contains($0.count) })
        expectEveryStampedEventInOrder(all.flatMap { $0 }, producers: 2)
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: all.count)
    }

    // MARK: - Throttle and debounce

    @Test(arguments: Target.allCases)
    func throttleLatestDeliversTheFirstAndAfterFlushTheLastEvent(target: Target) {
        let seen = Recorder<Int>()
        let (receptionist, probe) = start(
            Receptionist.pipeline(of: Int.self).throttle(for: .milliseconds(1), latest: true),
            on: target
        ) { seen.append($0) }
        onThreads(1) { _ in for value in 0..<Self.count { receptionist.send(value) } }
        receptionist.flush()
        #expect(waitUntil(seconds: 60) { seen.values.last == Self.count - 1 }, "the last state after flush")
        finishAndWait(receptionist)
        let values = seen.values
        #expect(values.first == 0, "the leading edge")
        #expect(values.last == Self.count - 1)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "in order, no repeats")
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: values.count)
    }

    @Test(arguments: Target.allCases)
    func throttleFirstDeliversAnOrderedSubsetStartingWithTheFirstEvent(target: Target) {
        let seen = Recorder<Int>()
        let (receptionist, probe) = start(
            Receptionist.pipeline(of: Int.self).throttle(for: .milliseconds(1), latest: false),
            on: target
        ) { seen.append($0) }
        onThreads(1) { _ in for value in 0..<Self.count { receptionist.send(value) } }
        finishAndWait(receptionist)
        let values = seen.values
        #expect(values.first == 0, "the leading edge")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "in order, no repeats")
        #expect(values.allSatisfy { (0..<Self.count).contains($0) })
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: values.count)
    }

    @Test(arguments: Target.allCases)
    func debounceDeliversTheLastEventAfterFlush(target: Target) {
        let seen = Recorder<Int>()
        let (receptionist, probe) = start(
            Receptionist.pipeline(of: Int.self).debounce(for: .milliseconds(1)),
            on: target
        ) { seen.append($0) }
        onThreads(1) { _ in for value in 0..<Self.count { receptionist.send(value) } }
        receptionist.flush()
        #expect(waitUntil(seconds: 60) { seen.values.last == Self.count - 1 }, "the last state after flush")
        receptionist.send(Self.count)
        finishAndWait(receptionist)
        let values = seen.values
        #expect(values.last == Self.count, "finish hands on the pending event")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "in order, no repeats")
        probe.expectOneAtATimeOnTarget()
        expectBalanced(receptionist.statistics, delivered: values.count)
    }
}

// MARK: - Helpers

extension StagesOnRealTargetsTests {
    /// A main-queue key, to tell that a task block runs on the main queue (on Linux the main
    /// queue is not serviced by the main thread, so `Thread.isMainThread` cannot tell).
    static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// A target of `kind` with a way to tell that the current code runs on it; `nil` target for
    /// the main actor.
    func make(_ kind: Target) -> (target: (any DeliveryTarget)?, isCurrent: @Sendable () -> Bool) {
        switch kind {
        case .serialQueue, .concurrentQueue:
            let queue =
                kind == .serialQueue
                ? DispatchQueue(label: "smoke.serial")
                : DispatchQueue(label: "smoke.concurrent", attributes: .concurrent)
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            return (queue, { DispatchQueue.getSpecific(key: key) == true })
        case .serialOperationQueue, .concurrentOperationQueue:
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = kind == .serialOperationQueue ? 1 : 4
            return (queue, { OperationQueue.current === queue })
        case .mainActor:
            let key = Self.mainQueueKey
            return (nil, { DispatchQueue.getSpecific(key: key) == true })
        }
    }

    /// Starts `pipeline` on a new target of `kind`; `task` runs inside a probe.
    func start<Output: Sendable>(
        _ pipeline: Pipeline<ReceptionistInput<Int>, Output>,
        on kind: Target,
        _ task: @escaping @Sendable (Output) -> Void
    ) -> (Receptionist<Int>, DeliveryProbe) {
        let (target, isCurrent) = make(kind)
        let probe = DeliveryProbe(isOnTarget: isCurrent)
        guard let target else {
            return (pipeline.deliver(on: .mainActor) { output in probe.run { task(output) } }, probe)
        }
        return (pipeline.deliver(on: target) { output in probe.run { task(output) } }, probe)
    }

    /// Sends `stamp(producer, 0..<count)` from `producers` threads at once.
    func sendStamped(to receptionist: Receptionist<Int>, producers: Int) {
        onThreads(producers) { producer in
            for sequence in 0..<Self.count {
                receptionist.send(stamp(producer, sequence))
            }
        }
    }

    func finishAndWait(_ receptionist: Receptionist<Int>, sourceLocation: SourceLocation = #_sourceLocation) {
        receptionist.finish()
        #expect(waitUntil(seconds: 60) { receptionist.isFinished }, "finished", sourceLocation: sourceLocation)
    }

    func sequencesByProducer(_ stamped: [Int], producers: Int) -> [Int: [Int]] {
        var byProducer = Dictionary(uniqueKeysWithValues: (0..<producers).map { ($0, [Int]()) })
        for value in stamped { byProducer[value >> 32, default: []].append(value & 0xFFFF_FFFF) }
        return byProducer
    }

    func expectEveryStampedEventInOrder(
        _ stamped: [Int],
        producers: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (producer, sequences) in sequencesByProducer(stamped, producers: producers) {
            #expect(sequences == Array(0..<Self.count), "producer \(producer)", sourceLocation: sourceLocation)
        }
    }

    /// A finished pipeline accounts for each output as delivered (or coalesced).
    func expectBalanced(
        _ stats: ReceptionistStatistics,
        delivered: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(stats.delivered == delivered, sourceLocation: sourceLocation)
        #expect(stats.received == stats.delivered + stats.coalesced, "\(stats)", sourceLocation: sourceLocation)
        #expect(
            stats.dropped == 0 && stats.discarded == 0 && stats.pending == 0 && stats.inFlight == 0,
            "\(stats)",
            sourceLocation: sourceLocation
        )
    }
}

extension StagesOnRealTargetsTests {
    /// Where and how task blocks ran: on their target, and never two at once.
    final class DeliveryProbe: Sendable {
        let isOnTarget: @Sendable () -> Bool
        private let running = AtomicValue<Int>(0)
        private let overlaps = AtomicValue<Int>(0)
        private let offTarget = AtomicValue<Int>(0)
        private let runs = AtomicValue<Int>(0)

        init(isOnTarget: @escaping @Sendable () -> Bool) {
            self.isOnTarget = isOnTarget
        }

        func run(_ body: () -> Void) {
            if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
            if !isOnTarget() { offTarget.add(1, ordering: .relaxed) }
            runs.add(1, ordering: .relaxed)
            body()
            running.subtract(1, ordering: .acquiringAndReleasing)
        }

        func expectOneAtATimeOnTarget(sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(runs.load(ordering: .relaxed) > 0, "some task block ran", sourceLocation: sourceLocation)
            #expect(overlaps.load(ordering: .relaxed) == 0, "never overlapped", sourceLocation: sourceLocation)
            #expect(offTarget.load(ordering: .relaxed) == 0, "all ran on the target", sourceLocation: sourceLocation)
        }
    }
}
