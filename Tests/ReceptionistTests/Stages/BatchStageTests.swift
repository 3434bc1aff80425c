import Testing

@testable import Receptionist

/// `batch(count:)`, `batch(every:)` and `batch(count:every:)` as timelines (tick = 1 ms).
@Suite struct BatchStageTests {
    /// A receptionist batching `String`s; `nil` count or interval leaves that limit out.
    private func batched(
        _ input: String,
        count: Int? = nil,
        every interval: Int? = nil,
        marbles: Marbles = Marbles()
    ) -> MarbleRun {
        marbles.run(input) { clock, out in
            let pipeline = Receptionist.pipeline(of: String.self)
            let receptionist: Receptionist<String> =
                switch (count, interval) {
                case (let count?, let interval?):
                    pipeline.batch(count: count, every: .milliseconds(interval), scheduler: clock)
                        .deliver(on: .immediate, out)
                case (let count?, nil):
                    pipeline.batch(count: count).deliver(on: .immediate, out)
                case (nil, let interval?):
                    pipeline.batch(every: .milliseconds(interval), scheduler: clock).deliver(on: .immediate, out)
                case (nil, nil):
                    preconditionFailure("a batch needs a count or an interval")
                }
            return .receptionist(receptionist)
        }
    }

    // MARK: count

    @Test func countOnlyHandsOnEachFullBatchAtOnceAndThePartialOneAtFinish() {
        let run = batched("abcdefg|", count: 3)
        #expect(run == "--[abc]--[def]-([g]|)")
        #expect(run.pendingTimers == 0)
        #expect(run.isFinished)
    }

    @Test func countOnlyHoldsAPartialBatchThroughSilenceUntilFlushed() {
        #expect(batched("ab----------", count: 3) == "")
        #expect(batched("ab---------!", count: 3) == "-----------[ab]")
        #expect(batched("ab!c--|", count: 3) == "--[ab]---([c]|)")
    }

    @Test func countOfOneDeliversEveryOutputAloneAndArmsNoTimer() {
        let run = batched("ab-c", count: 1, every: 5)
        #expect(run == "[a][b]-[c]")
        #expect(run.pendingTimers == 0)
    }

    // MARK: time

    @Test func timeOnlyClosesABatchIntervalAfterItsFirstOutput() {
        #expect(batched("ab-c----d---|", every: 5) == "-----[abc]------([d]|)")
    }

    @Test(arguments: [Marbles.Arrival.afterTimers, .beforeTimers])
    func anOutputExactlyAtTheIntervalStartsTheNextBatch(arrival: Marbles.Arrival) {
        let marbles = Marbles(arrival: arrival)
        #expect(batched("a----b----c-----", every: 5, marbles: marbles) == "-----[a]----[b]----[c]")
        #expect(batched("a----b----c-----", count: 3, every: 5, marbles: marbles) == "-----[a]----[b]----[c]")
    }

    @Test func anOutputOneTickBeforeTheIntervalJoinsTheBatch() {
        #expect(batched("a---b-----", every: 5) == "-----[ab]")
    }

    @Test func silenceDeliversNothingAndLeavesNoTimer() {
        let run = batched("--------------", count: 3, every: 5)
        #expect(run == "")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.received == 0)
    }

    @Test func aBatchClosedByTimeArmsNoTimerUntilTheNextOutput() {
        let run = batched("a------------", every: 5)
        #expect(run == "-----[a]")
        #expect(run.pendingTimers == 0)
    }

    // MARK: count or time

    /// The example of `batch(count:every:)`'s documentation.
    @Test func documentedCountOrTimeTimeline() {
        // a b c d at 0…3, e at 20, f at 22; count 3, every 10 ms.
        let input = "abcd---------------- e-f--------"
        #expect(batched(input, count: 3, every: 10) == "--[abc]---------- [d] ---------------- [ef]")
    }

    @Test func aBatchClosedByCountDisarmsItsTimer() {
        let full = batched("abc", count: 3, every: 5)
        #expect(full == "--[abc]")
        #expect(full.pendingTimers == 0)
        let partial = batched("ab", count: 3, every: 5)
        #expect(partial == "")
        #expect(partial.pendingTimers == 1)
        #expect(partial.nextDeadline == .zero + .milliseconds(5))
    }

    @Test func aBurstLargerThanTheCountIsCutIntoBatchesInOrder() {
        // Eight outputs in one tick, then the rest waits for the interval.
        #expect(batched("(abcdefgh)-----", count: 3, every: 5) == "([abc][def])----[gh]")
    }

    @Test func aBatchAfterACountClosureGetsAFreshInterval() {
        // [abc] closes at 2 by count; d at 4 opens a batch that closes at 9, not at 5.
        #expect(batched("abc-d-----e", count: 3, every: 5) == "--[abc]------[d]")
    }

    // MARK: flush, finish, cancel

    @Test func flushHandsOnThePartialBatchAndDisarmsItsTimer() {
        let run = batched("ab!c---!---", count: 10, every: 5)
        #expect(run == "--[ab]----[c]")
        #expect(run.pendingTimers == 0)
    }

    @Test func flushWithNothingHeldDeliversNothing() {
        #expect(batched("!-a!!----", count: 10, every: 5) == "---[a]")
    }

    @Test func finishHandsOnThePartialBatchThenFinishes() {
        let run = batched("ab|c---------", count: 10, every: 5)
        #expect(run == "--([ab]|)")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.received == 1)
        #expect(run.statistics.delivered == 1)
    }

    @Test func finishWithNothingHeldJustFinishes() {
        #expect(batched("-----|", count: 10, every: 5) == "-----|")
    }

    @Test func cancelDiscardsThePartialBatchAndItsTimer() {
        let run = batched("ab^-----c-----", count: 10, every: 5)
        #expect(run == "--^")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.received == 0)
        #expect(run.isCancelled)
    }

    @Test func cancelAfterFinishHasNoEffect() {
        let run = batched("a|^", count: 10, every: 5)
        #expect(run == "-([a]|)")
        #expect(!run.isCancelled)
    }

    // MARK: delivery

    @Test func deliveringOnTheSameManualSchedulerKeepsExactTicks() {
        let run = Marbles().run("abc-d-----|") { clock, out in
            .receptionist(
                Receptionist.pipeline(of: String.self)
                    .batch(count: 3, every: .milliseconds(5), scheduler: clock)
                    .deliver(on: clock, out)
            )
        }
        #expect(run == "--[abc]------[d]|")
    }

    @Test func statisticsCountBatchesNotElements() {
        let run = batched("abcde|", count: 2)
        #expect(run == "-[ab]-[cd]-([e]|)")
        #expect(run.statistics.received == 3)
        #expect(run.statistics.delivered == 3)
        #expect(run.statistics.pending == 0)
        #expect(run.statistics.inFlight == 0)
    }

    @Test func batchesWaitingForASlowTargetAreDiscardedByCancel() {
        let target = ManualTarget()
        let clock = ManualScheduler()
        let recorder = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 2, every: .milliseconds(5), scheduler: clock)
            .deliver(on: target) { recorder.append($0) }
        for value in 1...5 { receptionist.send(value) }
        #expect(receptionist.statistics.pending == 2)
        #expect(clock.pendingCount == 1)
        receptionist.cancel()
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(clock.pendingCount == 0)
        let statistics = receptionist.statistics
        #expect(statistics.received == 2)
        #expect(statistics.discarded == 2)
        #expect(statistics.delivered == 0)
    }

    @Test func aFlushIsDeliveredAfterTheBatchesAlreadyWaiting() {
        let target = ManualTarget()
        let recorder = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 2)
            .deliver(on: target) { recorder.append($0) }
        for value in 1...5 { receptionist.send(value) }
        receptionist.flush()
        receptionist.send(6)
        #expect(recorder.values.isEmpty)
        target.runAll()
        #expect(recorder.values == [[1, 2], [3, 4], [5]])
        receptionist.finish()
        target.runAll()
        #expect(recorder.values == [[1, 2], [3, 4], [5], [6]])
        #expect(receptionist.isFinished)
    }
}
