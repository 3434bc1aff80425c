import Dispatch
import Foundation
import Testing

@testable import Receptionist

@Suite struct ReceptionistTests {
    @Test func aBurstIsDeliveredInOrderByOneSubmission() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target) { seen.append($0) }
        for value in 0..<100 { receptionist.send(value) }
        #expect(target.submissionCount == 1, "one drain for the whole burst")
        #expect(seen.count == 0, "nothing runs before the target runs the drain")
        target.runAll()
        #expect(seen.values == Array(0..<100))
        #expect(receptionist.statistics.delivered == 100)
        #expect(receptionist.statistics.maxPending == 100)
    }

    @Test func aDrainGivesTheTargetBackAfterItsBudget() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target, drainBudget: 10) { seen.append($0) }
        for value in 0..<35 { receptionist.send(value) }
        #expect(target.runNext())
        #expect(seen.count == 10, "the first drain stops after its budget")
        #expect(target.pendingCount == 1, "and resubmits itself")
        target.runAll()
        #expect(seen.values == Array(0..<35))
        #expect(target.submissionCount == 4)
    }

    @Test func changesSentDuringADrainAreDeliveredByThatDrain() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let holder = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: target) { value in
            seen.append(value)
            if value < 5 { holder.withLock { $0 }?.send(value + 10) }
        }
        holder.withLock { $0 = receptionist }
        receptionist.send(0)
        receptionist.send(1)
        #expect(target.runAll() == 1)
        #expect(seen.values == [0, 1, 10, 11])
        holder.withLock { $0 = nil }
    }

    @Test func cancelFromInsideTheTaskBlockStopsAtThatBlock() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let holder = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: target) { value in
            seen.append(value)
            if value == 3 { holder.withLock { $0 }?.cancel() }
        }
        holder.withLock { $0 = receptionist }
        for value in 0..<10 { receptionist.send(value) }
        target.runAll()
        #expect(seen.values == [0, 1, 2, 3])
        #expect(receptionist.isCancelled)
        #expect(!receptionist.send(11).isAccepted, "a cancelled receptionist rejects sends")
        let stats = receptionist.statistics
        #expect(stats.received == 10)
        #expect(stats.delivered == 4)
        #expect(stats.discarded == 6)
        holder.withLock { $0 = nil }
    }

    @Test func cancelBeforeTheDrainRunsDeliversNothing() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target) { seen.append($0) }
        receptionist.send(1)
        receptionist.cancel()
        receptionist.cancel()
        target.runAll()
        #expect(seen.values.isEmpty)
        #expect(receptionist.statistics.discarded == 1)
    }

    @Test func cancelReleasesTheTaskBlockAndPendingEvents() {
        let target = ManualTarget()
        let counter = LifetimeCounter()
        var witness: LifetimeWitness? = LifetimeWitness(counter)
        let receptionist = Receptionist<LifetimeWitness>(on: target) { [witness] _ in witness?.touch() }
        receptionist.send(LifetimeWitness(counter))
        receptionist.send(LifetimeWitness(counter))
        witness = nil
        #expect(counter.deinitialized == 0)
        receptionist.cancel()
        #expect(counter.deinitialized == 3, "the task block's capture and both pending events")
        target.runAll()
    }

    @Test func releasingTheReceptionistCancelsIt() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        var receptionist: Receptionist<Int>? = Receptionist<Int>(on: target) { seen.append($0) }
        receptionist?.send(1)
        receptionist = nil
        target.runAll()
        #expect(seen.values.isEmpty)
    }

    @Test func finishDeliversWhatIsPendingThenRejects() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let counter = LifetimeCounter()
        let witness = LifetimeWitness(counter)
        let receptionist = Receptionist<Int>(on: target) { [witness] in
            witness.touch()
            seen.append($0)
        }
        _ = consume witness
        receptionist.send(1)
        receptionist.send(2)
        receptionist.finish()
        #expect(!receptionist.send(3).isAccepted)
        target.runAll()
        #expect(seen.values == [1, 2])
        #expect(counter.deinitialized == 1, "the task block is released once finished")
    }

    @Test func boundedBuffersDropAndCountEveryDrop() {
        for policy in [BufferPolicy.dropOldest(capacity: 3), .dropNewest(capacity: 3)] {
            let target = ManualTarget()
            let seen = Recorder<Int>()
            let receptionist = Receptionist<Int>(on: target, buffering: policy) { seen.append($0) }
            for value in 0..<10 { receptionist.send(value) }
            target.runAll()
            let expected = policy == .dropOldest(capacity: 3) ? [7, 8, 9] : [0, 1, 2]
            #expect(seen.values == expected, "\(policy)")
            let stats = receptionist.statistics
            #expect(stats.received == 10)
            #expect(stats.dropped == 7)
            #expect(stats.delivered + stats.dropped == stats.received)
            #expect(stats.maxPending == 3)
        }
    }

    @Test func evictedEventsAreReleasedOutsideTheLock() {
        // An event whose deinit sends to the same receptionist would deadlock if it were
        // released while the receptionist's lock is held.
        final class Reentrant: Sendable {
            let onDeinit: @Sendable () -> Void
            init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
            deinit { onDeinit() }
        }
        let target = ManualTarget()
        let holder = Locked<Receptionist<Reentrant?>?>(uncounted: nil)
        let receptionist = Receptionist<Reentrant?>(on: target, buffering: .dropOldest(capacity: 1)) { _ in }
        holder.withLock { $0 = receptionist }
        receptionist.send(Reentrant { _ = holder.withLock { $0 }?.statistics })
        receptionist.send(nil)  // evicts the first one; its deinit reads the statistics
        #expect(receptionist.statistics.dropped == 1)
        target.runAll()
        holder.withLock { $0 = nil }
    }

    @Test func eachEventIsReleasedRightAfterItsTaskBlock() {
        let target = ManualTarget()
        let counter = LifetimeCounter()
        let releasedBefore = Recorder<Int>()
        let receptionist = Receptionist<LifetimeWitness>(on: target) { _ in
            releasedBefore.append(counter.deinitialized)
        }
        for _ in 0..<5 { receptionist.send(LifetimeWitness(counter)) }
        target.runAll()
        #expect(releasedBefore.values == [0, 1, 2, 3, 4], "not held until the whole chunk is done")
        #expect(counter.deinitialized == 5)
    }

    @Test func everySnapshotAccountsForEveryEvent() {
        let target = ManualTarget()
        let snapshots = Recorder<ReceptionistStatistics>()
        let holder = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: target, buffering: .dropOldest(capacity: 6), drainBudget: 4) {
            _ in
            if let statistics = holder.withLock({ $0 })?.statistics { snapshots.append(statistics) }
        }
        holder.withLock { $0 = receptionist }
        for value in 0..<10 { receptionist.send(value) }
        target.runNext()
        for value in 10..<13 { receptionist.send(value) }
        target.runAll()
        snapshots.append(receptionist.statistics)
        let all = snapshots.values
        #expect(all.count == 10)
        for stats in all {
            #expect(
                stats.received == stats.delivered + stats.inFlight + stats.dropped + stats.discarded + stats.pending)
        }
        #expect(all.contains { $0.inFlight > 0 }, "snapshots taken inside a drain see changes in flight")
        #expect(all.last?.inFlight == 0)
        holder.withLock { $0 = nil }
    }

    @Test func immediateTargetDeliversOnTheSendingThreadWithoutRecursion() {
        let seen = Recorder<Int>()
        let depth = AtomicValue<Int>(0)
        let maxDepth = AtomicValue<Int>(0)
        let holder = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: .immediate, drainBudget: 4) { value in
            let current = depth.add(1, ordering: .relaxed).newValue
            maxDepth.max(current, ordering: .relaxed)
            seen.append(value)
            if value < 50 { holder.withLock { $0 }?.send(value + 1) }
            depth.subtract(1, ordering: .relaxed)
        }
        holder.withLock { $0 = receptionist }
        receptionist.send(0)
        #expect(seen.values == Array(0...50), "delivered before send returned")
        #expect(maxDepth.load(ordering: .relaxed) == 1, "a block that sends does not recurse")
        holder.withLock { $0 = nil }
    }
}

@Suite struct DeliveryTargetTests {
    /// Sends `count` events from one thread and returns what the task block saw and where.
    func roundTrip(
        _ make: (@escaping @Sendable (Int) -> Void) -> Receptionist<Int>,
        count: Int = 2_000
    ) -> [Int] {
        let seen = Recorder<Int>()
        let done = DispatchSemaphore(value: 0)
        let receptionist = make { value in
            seen.append(value)
            if value == count - 1 { done.signal() }
        }
        for value in 0..<count { receptionist.send(value) }
        #expect(wait(done))
        return seen.values
    }

    @Test func serialDispatchQueue() {
        let queue = DispatchQueue(label: "serial")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let onQueue = AtomicValue<Int>(0)
        let values = roundTrip { task in
            Receptionist<Int>(on: queue) { value in
                if DispatchQueue.getSpecific(key: key) == true { onQueue.add(1, ordering: .relaxed) }
                task(value)
            }
        }
        #expect(values == Array(0..<2_000))
        #expect(onQueue.load(ordering: .relaxed) == 2_000, "every block ran on the queue")
    }

    /// Delivers through `target` (which may run submitted work concurrently) and expects the
    /// task blocks never to overlap and to keep the sending order.
    func expectOneAtATimeInOrder(on target: some DeliveryTarget) {
        let running = AtomicValue<Int>(0)
        let overlaps = AtomicValue<Int>(0)
        let values = roundTrip { task in
            Receptionist<Int>(on: target, drainBudget: 3) { value in
                if running.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                task(value)
                running.subtract(1, ordering: .acquiringAndReleasing)
            }
        }
        #expect(values == Array(0..<2_000))
        #expect(overlaps.load(ordering: .relaxed) == 0)
    }

    @Test func concurrentDispatchQueueStillDeliversOneAtATimeInOrder() {
        expectOneAtATimeInOrder(on: DispatchQueue(label: "concurrent", attributes: .concurrent))
    }

    @Test func operationQueueWithSeveralConcurrentOperations() {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        expectOneAtATimeInOrder(on: queue)
    }

    @Test func mainOperationQueue() {
        let values = roundTrip { task in Receptionist<Int>(on: OperationQueue.main, task) }
        #expect(values == Array(0..<2_000))
    }

    @Test func mainActorTaskBlocksAreIsolatedToTheMainActor() {
        let values = roundTrip { task in
            Receptionist<Int>(on: .mainActor) { (value: Int) in
                MainActor.preconditionIsolated()
                task(value)
            }
        }
        #expect(values == Array(0..<2_000))
    }

    @MainActor
    final class MainActorState {
        var values: [Int] = []
    }

    @Test func mainActorTaskBlocksMayTouchMainActorState() async {
        let state = await MainActor.run { MainActorState() }
        let done = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: .mainActor) { value in
            // Compiles only because the task block is @MainActor.
            state.values.append(value)
            if value == 99 { done.signal() }
        }
        DispatchQueue.global().async {
            for value in 0..<100 { receptionist.send(value) }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                _ = wait(done)
                continuation.resume()
            }
        }
        let values = await MainActor.run { state.values }
        #expect(values == Array(0..<100))
    }

    @Test func customTarget() {
        let values = roundTrip { task in Receptionist<Int>(on: ThreadTarget(), drainBudget: 7, task) }
        #expect(values == Array(0..<2_000))
    }
}
