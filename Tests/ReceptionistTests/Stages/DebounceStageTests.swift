import Testing

@testable import Receptionist

/// `debounce(for:scheduler:)` as timelines (tick = 1 ms).
@Suite struct DebounceStageTests {
    private func debounced(_ input: String, for interval: Int = 10, marbles: Marbles = Marbles()) -> MarbleRun {
        marbles.run(input) { clock, out in
            .receptionist(
                Receptionist.pipeline(of: String.self)
                    .debounce(for: .milliseconds(interval), scheduler: clock)
                    .deliver(on: .immediate, out)
            )
        }
    }

    /// The example of `debounce(for:scheduler:)`'s documentation: a b c at 0 3 6 → c at 16;
    /// d at 30 → d at 40.
    @Test func documentedTimeline() {
        let input = "a--b--c----------------------- d----------"
        let run = debounced(input)
        #expect(run == "----------------c------------- ----------d")
        #expect(run.pendingTimers == 0)
    }

    @Test(arguments: [Marbles.Arrival.afterTimers, .beforeTimers])
    func anOutputExactlyAnIntervalLaterDoesNotReplaceThePendingOne(arrival: Marbles.Arrival) {
        let run = debounced("a---------b----------", marbles: Marbles(arrival: arrival))
        #expect(run == "----------a---------b")
        #expect(run.pendingTimers == 0)
    }

    @Test func anOutputOneTickEarlierReplacesThePendingOne() {
        #expect(debounced("a--------b----------") == "-------------------b")
    }

    @Test func aSteadyFloodDelaysEverythingUntilItStops() {
        let run = debounced("abcdefghijklmnopqrst----------", for: 5)
        #expect(run == "------------------------t")
        #expect(run.statistics.received == 1)
    }

    @Test func aFloodKeepsAtMostOneTimerArmed() {
        let clock = ManualScheduler()
        let recorder = Recorder<Int>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .debounce(for: .milliseconds(5), scheduler: clock)
            .deliver(on: .immediate) { recorder.append($0) }
        for value in 0..<20 {
            receptionist.send(value)
            #expect(clock.pendingCount == 1)
            clock.advance(by: .milliseconds(1))
        }
        #expect(recorder.values.isEmpty)
        clock.advance(by: .milliseconds(4))
        #expect(recorder.values == [19])
        #expect(clock.pendingCount == 0)
        withExtendedLifetime(receptionist) {}
    }

    @Test func silenceDeliversNothing() {
        let run = debounced("-------------------")
        #expect(run == "")
        #expect(run.pendingTimers == 0)
    }

    // MARK: flush, finish, cancel

    @Test func flushHandsOnThePendingOutputNowAndDisarmsTheTimer() {
        let run = debounced("ab!-----------")
        #expect(run == "--b")
        #expect(run.pendingTimers == 0)
    }

    @Test func flushWithNothingPendingDeliversNothing() {
        #expect(debounced("!a!!-----------") == "--a")
    }

    @Test func anOutputAfterAFlushWaitsAFullInterval() {
        #expect(debounced("a!b-------------") == "-a--------- -b")
    }

    @Test func finishHandsOnThePendingOutputThenFinishes() {
        let run = debounced("ab|c----------")
        #expect(run == "--(b|)")
        #expect(run.pendingTimers == 0)
    }

    @Test func cancelDiscardsThePendingOutputAndTheTimer() {
        let run = debounced("ab^-----------c")
        #expect(run == "--^")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.received == 0)
    }
}
