import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension PipelineValues {
    /// Every element, until the sequence ends.
    func collected() async -> [Element] {
        var elements: [Element] = []
        for await element in self { elements.append(element) }
        return elements
    }
}

@Suite struct PipelineValuesTests {
    @Test func sentEventsArriveInOrderAndFinishEndsTheSequence() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
        for value in 0..<100 { receptionist.send(value) }
        receptionist.finish()
        #expect(await values.collected() == Array(0..<100))
        #expect(receptionist.isFinished)
        #expect(values.statistics.delivered == 100)
    }

    @Test func eventsSentWhileTheConsumerWaitsArriveInOrder() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).filter { $0 % 3 != 0 }.values()
        let consumer = Task { await values.collected() }
        DispatchQueue.global().async {
            for value in 0..<1_000 { receptionist.send(value) }
            receptionist.finish()
        }
        #expect(await consumer.value == (0..<1_000).filter { $0 % 3 != 0 })
    }

    @Test func observedChangesArriveInOrderAndEndWhenTheBoxIsDeallocated() async {
        var box: ObservableValue<Int>? = ObservableValue(0)
        let values = box!.receptionist(options: .initial).map(\.newValue).values()
        box!.value = 1
        box!.value = 2
        box = nil  // the observation finishes: what is pending is still handed over
        #expect(await values.collected() == [0, 1, 2])
    }

    @Test func outputsWaitUntilTheConsumerAsks() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
        receptionist.send(1)
        receptionist.send(2)
        #expect(values.statistics.pending == 2)
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect(values.statistics.pending == 1)
        #expect(values.statistics.delivered == 1)
        #expect(await iterator.next() == 2)
        receptionist.finish()
        #expect(await iterator.next() == nil)
        #expect(await iterator.next() == nil)
    }

    @Test func worksAfterABatchOnAManualScheduler() async {
        let clock = ManualScheduler()
        let (receptionist, values) = Receptionist.pipeline(of: Int.self)
            .batch(count: 3, every: .milliseconds(10), scheduler: clock)
            .values()
        var iterator = values.makeAsyncIterator()
        for value in 1...4 { receptionist.send(value) }
        #expect(await iterator.next() == [1, 2, 3])
        #expect(values.statistics.pending == 0)
        clock.advance(by: .milliseconds(10))
        #expect(await iterator.next() == [4])
        receptionist.send(5)
        receptionist.finish()  // the partial batch is handed on, then the sequence ends
        #expect(await iterator.next() == [5])
        #expect(await iterator.next() == nil)
    }
}

extension PipelineValuesTests {
    @Test func dropNewestKeepsTheFirstWaitingOutputsAndCountsTheRest() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).values(buffering: .dropNewest(capacity: 2))
        for value in 1...5 { receptionist.send(value) }
        receptionist.finish()
        #expect(await values.collected() == [1, 2])
        #expect(values.statistics.dropped == 3)
        #expect(values.statistics.delivered == 2)
    }

    @Test func dropOldestKeepsTheLatestWaitingOutputsAndCountsTheRest() async {
        let box = ObservableValue(0)
        let values = box.receptionist().map(\.newValue).values(buffering: .dropOldest(capacity: 2))
        var iterator = values.makeAsyncIterator()
        for value in 1...5 { box.value = value }
        #expect(await iterator.next() == 4)
        #expect(await iterator.next() == 5)
        #expect(values.statistics.dropped == 3)
        box.value = 6  // the capacity counts waiting outputs only
        box.value = 7
        #expect(await iterator.next() == 6)
        #expect(await iterator.next() == 7)
        #expect(values.statistics.dropped == 3)
    }

    @Test func coalescedValuesFoldWhatTheConsumerDidNotTakeYet() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).coalesce().values()
        var iterator = values.makeAsyncIterator()
        for value in 1...5 { receptionist.send(value) }
        #expect(await iterator.next() == Coalesced(latest: 5, count: 5))
        receptionist.send(6)
        #expect(await iterator.next() == Coalesced(latest: 6, count: 1))
        receptionist.finish()
        #expect(await iterator.next() == nil)
        #expect(values.statistics.coalesced == 4)
    }

    @Test func coalescedObservedChangesKeepTheirChain() async {
        let box = ObservableValue(0)
        // The type names the change overload of coalesce(): without context, the one for any
        // output (Coalesced<ObservedChange>) is chosen.
        let values: PipelineValues<ObservedChange<ObservableValue<Int>, Int>> = box.receptionist().coalesce().values()
        var iterator = values.makeAsyncIterator()
        for value in 1...3 { box.value = value }
        let first = await iterator.next()
        #expect(first?.oldValue == 0)
        #expect(first?.newValue == 3)
        #expect(first?.coalescedCount == 3)
        box.value = 4
        let second = await iterator.next()
        #expect(second?.oldValue == 3)
        #expect(second?.newValue == 4)
    }

    @MainActor @Test func aConsumerOnTheMainActorGetsItsValuesThere() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
        receptionist.send(1)
        receptionist.send(2)
        receptionist.finish()
        var received: [Int] = []
        for await value in values {
            MainActor.preconditionIsolated()
            received.append(value)
        }
        #expect(received == [1, 2])
    }
}

extension PipelineValuesTests {
    @Test func cancellingTheConsumingTaskCancelsTheReceptionist() async {
        let lifetimes = LifetimeCounter()
        let witness = LifetimeWitness(lifetimes)
        let (receptionist, values) = Receptionist.pipeline(of: Int.self)
            .map { [witness] value in
                witness.touch()
                return value
            }
            .values()
        _ = consume witness
        let consumer = Task { await values.collected() }
        receptionist.send(1)
        #expect(await waitUntilAsync(seconds: 240) { values.statistics.delivered == 1 })
        consumer.cancel()
        #expect(await consumer.value == [1])
        #expect(receptionist.isCancelled)
        #expect(lifetimes.deinitialized == 1)  // the stages and what they captured are released
        #expect(!receptionist.send(2).isAccepted)
    }

    @Test func cancellingTheConsumingTaskStopsTheObservation() async {
        let box = ObservableValue(0)
        let values = box.receptionist().values()
        let consumer = Task { await values.collected().count }
        box.value = 1
        #expect(await waitUntilAsync(seconds: 240) { values.statistics.delivered == 1 })
        consumer.cancel()
        #expect(await consumer.value == 1)
        #expect(box.observerCount == 0)
    }

    @Test func aTaskCancelledWhileOutputsWaitDiscardsThem() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
        for value in 1...3 { receptionist.send(value) }
        let consumer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await values.collected()
        }
        #expect(await consumer.value == [])
        #expect(receptionist.isCancelled)
        #expect(values.statistics.discarded == 3)
    }

    @Test func breakingOutOfTheLoopCancelsTheReceptionist() async {
        let (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
        for value in 1...3 { receptionist.send(value) }
        for await value in values {
            #expect(value == 1)
            break
        }
        #expect(receptionist.isCancelled)
        #expect(values.statistics.discarded == 2)
        // One pass: a new iterator finds the pipeline cancelled.
        var again = values.makeAsyncIterator()
        #expect(await again.next() == nil)
    }

    @Test func droppingTheIteratorStopsTheObservationEvenIfTheSequenceIsKept() async {
        let box = ObservableValue(0)
        let values = box.receptionist().values()
        do {
            var iterator = values.makeAsyncIterator()
            box.value = 1
            #expect(await iterator.next()?.newValue == 1)
        }
        #expect(box.observerCount == 0)
        withExtendedLifetime(values) {}
    }

    @Test func droppingASequenceNeverIteratedCancels() {
        let lifetimes = LifetimeCounter()
        let witness = LifetimeWitness(lifetimes)
        let (receptionist, values) = Receptionist.pipeline(of: Int.self)
            .filter { [witness] _ in
                witness.touch()
                return true
            }
            .values()
        _ = consume witness
        receptionist.send(1)
        _ = consume values
        #expect(receptionist.isCancelled)
        #expect(lifetimes.deinitialized == 1)
    }

    @Test func releasingTheReceptionistEndsTheSequenceAtOnce() async {
        var receptionist: Receptionist<Int>?
        let values: PipelineValues<Int>
        (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
        receptionist!.send(1)
        receptionist = nil  // cancels: the waiting output is discarded
        #expect(await values.collected() == [])
        #expect(values.statistics.discarded == 1)
    }

    @Test func releasingAFinishingReceptionistStillDeliversEverything() async {
        var receptionist: Receptionist<Int>?
        let values: PipelineValues<Int>
        (receptionist, values) = Receptionist.pipeline(of: Int.self).map { $0 * 10 }.values()
        for value in 1...3 { receptionist!.send(value) }
        receptionist!.finish()
        receptionist = nil
        #expect(await values.collected() == [10, 20, 30])
    }

    /// A second iterator made after the first was dropped returns nil, also when the receptionist
    /// finished and was released with outputs still waiting (found in review: it returned one).
    @Test(arguments: [false, true])
    func aSecondIteratorAfterTheFirstWasDroppedReturnsNil(finishAndRelease: Bool) async {
        var receptionist: Receptionist<Int>?
        let values: PipelineValues<Int>
        (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
        for value in 1...5 { receptionist!.send(value) }
        if finishAndRelease {
            receptionist!.finish()
            receptionist = nil
        }
        do {
            var first = values.makeAsyncIterator()
            #expect(await first.next() == 1)
        }
        var second = values.makeAsyncIterator()
        #expect(await second.next() == nil)
        #expect(await second.next() == nil)
        withExtendedLifetime(receptionist) {}
    }

    @Test(.exitTest) func iteratingFromTwoTasksAtOnceStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let (receptionist, values) = Receptionist.pipeline(of: Int.self).values()
            // Nothing is ever sent: both wait, and whichever calls next() second stops the program.
            let first = Task {
                var iterator = values.makeAsyncIterator()
                _ = await iterator.next()
            }
            var second = values.makeAsyncIterator()
            _ = await second.next()
            _ = await first.value
            withExtendedLifetime(receptionist) {}
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("PipelineValues was iterated by two tasks at once"))
    }
}
