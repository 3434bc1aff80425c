import Testing

@testable import Receptionist

@Suite struct ReceptionistStateMachineTests {
    typealias Machine = ReceptionistStateMachine<Int>

    func machine(_ policy: BufferPolicy = .unbounded) -> Machine {
        Machine(policy: policy) { _ in }
    }

    @Test func onlyTheFirstChangeOfABurstAsksForADrain() {
        var machine = machine()
        #expect(machine.enqueue(1).action == .submitDrain)
        #expect(machine.enqueue(2).action == .none)
        #expect(machine.enqueue(3).action == .none)
        #expect(machine.isDrainScheduled)
        var chunk: [Int] = []
        guard case .deliver = machine.nextChunk(into: &chunk, maxCount: 10) else {
            Issue.record("expected a chunk")
            return
        }
        #expect(chunk == [1, 2, 3])
        // A change during the drain does not ask for another drain: the running one takes it.
        #expect(machine.enqueue(4).action == .none)
        chunk.removeAll()
        guard case .deliver = machine.nextChunk(into: &chunk, maxCount: 10) else {
            Issue.record("expected a chunk")
            return
        }
        #expect(chunk == [4])
        chunk.removeAll()
        guard case .stop(releasedHandler: .none) = machine.nextChunk(into: &chunk, maxCount: 10) else {
            Issue.record("expected the drain to stop")
            return
        }
        #expect(!machine.isDrainScheduled)
        #expect(machine.enqueue(5).action == .submitDrain, "idle again: the next change asks for a drain")
    }

    @Test func aDrainWithoutBudgetYieldsWhileWorkIsPending() {
        var machine = machine()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        var chunk: [Int] = []
        guard case .deliver = machine.nextChunk(into: &chunk, maxCount: 1) else {
            Issue.record("expected a chunk")
            return
        }
        #expect(chunk == [1])
        guard case .yield = machine.nextChunk(into: &chunk, maxCount: 0) else {
            Issue.record("expected a yield")
            return
        }
        #expect(machine.isDrainScheduled, "a yielding drain stays scheduled")
        #expect(machine.enqueue(3).action == .none)
    }

    @Test func dropOldestEvictsAndCounts() {
        var machine = machine(.dropOldest(capacity: 2))
        #expect(machine.enqueue(1).evicted == nil)
        #expect(machine.enqueue(2).evicted == nil)
        #expect(machine.enqueue(3).evicted == 1)
        #expect(machine.enqueue(4).evicted == 2)
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 10)
        #expect(chunk == [3, 4])
        let stats = machine.statistics(delivered: 2)
        #expect(stats.received == 4)
        #expect(stats.dropped == 2)
        #expect(stats.maxPending == 2)
    }

    @Test func dropNewestKeepsTheFirstAndCounts() {
        var machine = machine(.dropNewest(capacity: 2))
        for value in 1...5 { _ = machine.enqueue(value) }
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 10)
        #expect(chunk == [1, 2])
        #expect(machine.statistics(delivered: 2).dropped == 3)
    }

    @Test func cancelDiscardsPendingReleasesTheHandlerAndRejectsLaterChanges() {
        var machine = machine()
        _ = machine.enqueue(1)
        _ = machine.enqueue(2)
        let released = machine.cancel()
        #expect(released?.discarded.elements == [1, 2])
        #expect(released?.handler != nil)
        #expect(machine.lifecycle == .cancelled)
        #expect(machine.enqueue(3).action == .rejected)
        #expect(machine.cancel() == nil, "cancel is idempotent")
        var chunk: [Int] = []
        guard case .stop(releasedHandler: .none) = machine.nextChunk(into: &chunk, maxCount: 10) else {
            Issue.record("a drain after cancel must stop")
            return
        }
        #expect(chunk.isEmpty)
        let stats = machine.statistics(delivered: 0)
        #expect(stats.received == 2)
        #expect(stats.discarded == 2)
    }

    @Test func finishDeliversPendingThenReleasesTheHandler() {
        var machine = machine()
        _ = machine.enqueue(1)
        #expect(machine.finish() == nil, "pending work: not finished yet")
        #expect(machine.lifecycle == .finishing)
        #expect(machine.enqueue(2).action == .rejected)
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 10)
        #expect(chunk == [1])
        guard case .stop(let handler) = machine.nextChunk(into: &chunk, maxCount: 10) else {
            Issue.record("expected stop")
            return
        }
        #expect(handler != nil)
        #expect(machine.lifecycle == .finished)
    }

    @Test func finishWhenIdleEndsAtOnce() {
        var machine = machine()
        #expect(machine.finish() != nil)
        #expect(machine.lifecycle == .finished)
        #expect(machine.cancel() == nil, "cancel after finish does nothing")
    }

    @Test func interruptedDrainCountsTheRestOfItsChunkAsDiscarded() {
        var machine = machine()
        for value in 1...4 { _ = machine.enqueue(value) }
        var chunk: [Int] = []
        _ = machine.nextChunk(into: &chunk, maxCount: 10)
        _ = machine.cancel()
        machine.drainInterrupted(undelivered: 3)
        let stats = machine.statistics(delivered: 1)
        #expect(stats.received == stats.delivered + stats.dropped + stats.discarded + stats.pending)
        #expect(stats.discarded == 3)
        #expect(!machine.isDrainScheduled)
    }
}

/// How a drain and the segmented buffer hand elements to each other.
@Suite struct ReceptionistStateMachineSegmentTests {
    typealias Machine = ReceptionistStateMachine<Int>

    @Test func aDrainIsNeverHandedMoreThanItsBudget() {
        var machine = Machine(policy: .unbounded) { _ in }
        for value in 0..<10 { _ = machine.enqueue(value) }
        guard case .deliver(let segment, _) = machine.nextSegment(budget: 3).action else {
            Issue.record("expected a segment")
            return
        }
        #expect(segment.count == 3)
        #expect(machine.pendingCount == 7)
        #expect(machine.statistics(delivered: 0).inFlight == 3)
        for expected in 0..<3 { #expect(segment.removeFirst() == expected) }
        // Newer elements arrive while the drain runs; they queue behind the rest.
        _ = machine.enqueue(10)
        var returned: BufferSegment<Int>? = segment
        machine.giveBack(&returned)
        #expect(returned == nil, "the emptied segment is kept as the spare")
        #expect(machine.buffer.elements == Array(3...10))
        // Budget 8 of 8 pending: the whole (split-off) segment is taken, no copy.
        var chunk: [Int] = []
        machine.nextChunk(into: &chunk, maxCount: 7)
        #expect(chunk == Array(3...9))
        chunk.removeAll()
        machine.nextChunk(into: &chunk, maxCount: 7)
        #expect(chunk == [10])
        let statistics = machine.statistics(delivered: 11)
        #expect(statistics.inFlight == 0)
        #expect(statistics.pending == 0)
    }

    @Test func aBoundedBufferStaysBoundedWhileADrainRunsOneAtATime() {
        var machine = Machine(policy: .dropOldest(capacity: 16)) { _ in }
        var next = 0
        var delivered: [Int] = []
        for _ in 0..<100 {
            for _ in 0..<20 {
                _ = machine.enqueue(next)
                next += 1
            }
            #expect(machine.pendingCount <= 16)
            machine.nextChunk(into: &delivered, maxCount: 1)
        }
        #expect(machine.statistics(delivered: delivered.count).maxPending == 16)
        #expect(delivered == delivered.sorted())
    }

    @Test func theRestOfASegmentAfterACancelIsDiscarded() {
        var machine = Machine(policy: .unbounded) { _ in }
        for value in 0..<5 { _ = machine.enqueue(value) }
        guard case .deliver(let segment, _) = machine.nextSegment(budget: 256).action else {
            Issue.record("expected a segment")
            return
        }
        _ = segment.removeFirst()
        _ = segment.removeFirst()
        _ = machine.cancel()
        machine.drainInterrupted(undelivered: segment.count)
        let statistics = machine.statistics(delivered: 2)
        #expect(statistics.discarded == 3)
        #expect(statistics.inFlight == 0)
        #expect(statistics.received == statistics.delivered + statistics.discarded + statistics.pending)
    }

    /// Issue 40, item 7: a segment a drain took counts as undelivered until its last task block
    /// returned, so that a stalled task block shows in `oldestPendingAge`.
    @Test func theOldestUndeliveredChangeIsInTheDrainsSegmentUntilItIsDelivered() {
        let clock = ManualDeliveryClock()
        var machine = Machine(policy: .unbounded, clock: DeliveryClock(manual: clock)) { _ in }
        #expect(machine.oldestUndeliveredStartedAt(delivered: 0) == nil)
        for value in 0..<3 { _ = machine.enqueue(value) }  // stamped at 1 ns
        clock.advance(by: .nanoseconds(10))
        guard case .deliver(let segment, _) = machine.nextSegment(budget: 256).action else {
            Issue.record("expected a segment")
            return
        }
        #expect(machine.buffer.isEmpty)
        #expect(machine.oldestUndeliveredStartedAt(delivered: 0) == 1, "taken, not delivered")
        _ = machine.enqueue(3)  // a segment of its own, stamped at 11 ns
        _ = segment.removeFirst()
        _ = segment.removeFirst()
        #expect(machine.oldestUndeliveredStartedAt(delivered: 2) == 1, "per segment: its oldest's stamp")
        _ = segment.removeFirst()
        #expect(machine.oldestUndeliveredStartedAt(delivered: 3) == 11, "delivered whole: the buffer's oldest")

        // A drain that stops, or is interrupted, holds nothing.
        var returned: BufferSegment<Int>? = segment
        machine.giveBack(&returned)
        guard case .deliver(let next, _) = machine.nextSegment(budget: 256).action else {
            Issue.record("expected a segment")
            return
        }
        #expect(machine.oldestUndeliveredStartedAt(delivered: 3) == 11)
        _ = machine.cancel()
        machine.drainInterrupted(undelivered: next.count)
        #expect(machine.oldestUndeliveredStartedAt(delivered: 3) == nil)
    }

    @Test func anEmptiedSegmentBecomesTheSpare() {
        var machine = Machine(policy: .unbounded) { _ in }
        _ = machine.enqueue(1)
        var chunk: [Int] = []
        machine.nextChunk(into: &chunk, maxCount: 256)
        #expect(chunk == [1])
        let spare = machine.buffer.spare
        #expect(spare != nil)
        _ = machine.enqueue(2)
        #expect(machine.buffer.head === spare, "the next burst reuses it: no allocation")
    }

    @Test func boundedAndCoalescingBuffersUseSegmentsNoLargerThanTheyCanHold() {
        let bounded = Machine(policy: .dropOldest(capacity: 3)) { _ in }
        #expect(bounded.buffer.segmentCapacity == 3)
        let coalescing = Machine(
            policy: .unbounded, merge: { pending, new in swap(&pending, &new) }, handler: { _ in })
        #expect(coalescing.buffer.segmentCapacity == 1)
        let unbounded = Machine(policy: .unbounded) { _ in }
        #expect(unbounded.buffer.segmentCapacity == 256)
    }

    @Test func dropOldestEvictsAcrossSegmentBoundaries() {
        var machine = Machine(policy: .dropOldest(capacity: 3)) { _ in }
        var evicted: [Int] = []
        for value in 0..<10 {
            if let element = machine.enqueue(value).evicted { evicted.append(element) }
        }
        #expect(evicted == Array(0..<7))
        #expect(machine.buffer.elements == [7, 8, 9])
        #expect(machine.buffer.segmentCount <= 2)
    }
}
