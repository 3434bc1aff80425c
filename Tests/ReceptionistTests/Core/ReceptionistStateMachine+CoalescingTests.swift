import Testing

@testable import Receptionist

/// The coalescing buffer (``Pipeline/coalesce()``) and the atomic final element of
/// `finish(appending:)`, on the plain state machine.
@Suite struct ReceptionistStateMachineCoalescingTests {
    typealias Machine = ReceptionistStateMachine<[Int]>

    /// Elements are lists, and merging concatenates, so the tests see exactly what was folded;
    /// the merge leaves the list it replaced in `new`, as a merge must.
    func coalescingMachine() -> Machine {
        Machine(
            policy: .unbounded,
            merge: { pending, new in
                swap(&pending, &new)
                pending = new + pending
            },
            handler: { _ in }
        )
    }

    @Test func foldsEverythingThatArrivesWhileOneIsPending() {
        var machine = coalescingMachine()
        let first = machine.enqueue([1])
        #expect(first.action == .submitDrain && first.result == .accepted && first.evicted == nil)
        let second = machine.enqueue([2])
        #expect(second.action == .none)
        #expect(second.evicted == [1], "the displaced pending element is handed back, to be released outside the lock")
        _ = machine.enqueue([3])
        #expect(machine.pendingCount == 1)

        var chunk: [[Int]] = []
        guard case .deliver = machine.nextChunk(into: &chunk, maxCount: 256) else {
            Issue.record("expected a chunk")
            return
        }
        #expect(chunk == [[1, 2, 3]])
        // While the task block runs, the next change waits alone, then is folded again.
        #expect(machine.enqueue([4]).action == .none)
        _ = machine.enqueue([5])
        chunk.removeAll()
        guard case .deliver = machine.nextChunk(into: &chunk, maxCount: 256) else {
            Issue.record("expected a chunk")
            return
        }
        #expect(chunk == [[4, 5]])

        let statistics = machine.statistics(delivered: 2)
        #expect(statistics.received == 5)
        #expect(statistics.coalesced == 3)
        #expect(statistics.maxPending == 1)
        #expect(
            statistics.received
                == statistics.delivered + statistics.inFlight + statistics.dropped + statistics.discarded
                + statistics.coalesced + statistics.pending
        )
    }

    @Test func aCancelDiscardsTheFoldedElementOnce() {
        var machine = coalescingMachine()
        _ = machine.enqueue([1])
        _ = machine.enqueue([2])
        let released = machine.cancel()
        #expect(released?.discarded.elements == [[1, 2]])
        let statistics = machine.statistics(delivered: 0)
        #expect(statistics.discarded == 1)
        #expect(statistics.coalesced == 1)
        #expect(statistics.received == 2)
    }

    @Test func finishAppendingBuffersTheLastElementAndStopsAccepting() {
        var machine = Machine(policy: .unbounded) { _ in }
        let outcome = machine.finish(appending: [9])
        #expect(outcome.needsDrain, "an idle receptionist needs a drain for its last element")
        #expect(outcome.releasedHandler == nil)
        #expect(machine.lifecycle == .finishing)
        #expect(machine.enqueue([10]).action == .rejected, "nothing is accepted after the last element")

        var chunk: [[Int]] = []
        guard case .deliver = machine.nextChunk(into: &chunk, maxCount: 256) else {
            Issue.record("expected a chunk")
            return
        }
        #expect(chunk == [[9]])
        guard case .stop(let handler) = machine.nextChunk(into: &chunk, maxCount: 256) else {
            Issue.record("expected the drain to stop")
            return
        }
        #expect(handler != nil, "the drain that empties a finishing buffer releases the handler")
        #expect(machine.lifecycle == .finished)
    }

    @Test func finishAppendingDuringADrainDoesNotAskForAnother() {
        var machine = Machine(policy: .unbounded) { _ in }
        _ = machine.enqueue([1])
        let outcome = machine.finish(appending: [2])
        #expect(!outcome.needsDrain)
        #expect(machine.pendingCount == 2)
        #expect(machine.finish(appending: [3]).needsDrain == false, "a second finish is ignored")
        #expect(machine.pendingCount == 2)
    }
}
