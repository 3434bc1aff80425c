import Testing

@testable import Receptionist

/// `throttle(for:scheduler:latest:)` as timelines (tick = 1 ms).
@Suite struct ThrottleStageTests {
    private func throttled(
        _ input: String,
        for interval: Int = 10,
        latest: Bool = true,
        marbles: Marbles = Marbles()
    ) -> MarbleRun {
        marbles.run(input) { clock, out in
            .receptionist(
                Receptionist.pipeline(of: String.self)
                    .throttle(for: .milliseconds(interval), scheduler: clock, latest: latest)
                    .deliver(on: .immediate, out)
            )
        }
    }

    /// The example of `throttle(for:scheduler:latest:)`'s documentation: a b c at 0 2 4, d e at
    /// 35 37; a at once, c at 10, d at once, e at 45.
    @Test func documentedTimelineWithLatest() {
        let input = "a-b-c------------------------------ d-e------------------"
        let run = throttled(input, latest: true)
        #expect(run == "a---------c------------------------ d---------e")
        // The window e opened ended at 55 with nothing held: the stage went idle.
        #expect(run.pendingTimers == 0)
    }

    @Test func withoutLatestAWindowHandsOnItsFirstHeldOutput() {
        let input = "a-b-c------------------------------ d-e------------------"
        #expect(throttled(input, latest: false) == "a---------b------------------------ d---------e")
    }

    @Test func aBurstGivesItsFirstAtOnceAndItsLatestAtTheWindowEnd() {
        #expect(throttled("abcdefghij----------", latest: true) == "a---------j")
        #expect(throttled("abcdefghij----------", latest: false) == "a---------b")
    }

    @Test func aSteadyFloodIsCutToOneOutputPerInterval() {
        // One output per tick for 25 ticks, interval 5: one output every 5 ticks.
        let input = "abcdefghijklmnopqrstuvwxy-----"
        #expect(throttled(input, for: 5, latest: true) == "a----e----j----o----t----y")
        // A window's first held output is the one that arrived at its start, right after the timer.
        #expect(throttled(input, for: 5, latest: false) == "a----b----f----k----p----u")
    }

    @Test(arguments: [Marbles.Arrival.afterTimers, .beforeTimers])
    func anOutputExactlyAtTheWindowEndFallsInTheNextWindow(arrival: Marbles.Arrival) {
        let marbles = Marbles(arrival: arrival)
        // Nothing held when the window ends: the stage is idle, so b passes at once.
        #expect(throttled("a---------b----------", marbles: marbles) == "a---------b")
        // b held, c exactly at the end: b is the trailing output at 10, c waits for 20.
        let run = throttled("ab--------c----------", marbles: marbles)
        #expect(run == "a---------b---------c")
        #expect(run.pendingTimers == 1)
    }

    @Test func anOutputOneTickBeforeTheWindowEndIsHeldUntilIt() {
        #expect(throttled("a--------b-----------") == "a---------b")
    }

    @Test func silenceAfterOneOutputLeavesTheStageIdle() {
        let run = throttled("a------------------------------")
        #expect(run == "a")
        #expect(run.pendingTimers == 0)
    }

    @Test func outputsAreNeverCloserThanTheInterval() {
        let run = throttled("ab-c-----de---f----g-----h-----------", for: 4)
        // a at once; c ends a's window (4); that window ends empty (8): idle; d at once (9);
        // e, f, g each end the window before (13, 17, 21); h lands on the end of g's (25),
        // which is empty: at once.
        #expect(run == "a---c----d---e---f---g---h")
    }

    // MARK: flush, finish, cancel

    @Test func flushHandsOnTheHeldOutputNowAndOpensAWindow() {
        // b flushed at 2 opens a window to 12: c at 7 is held until then.
        let run = throttled("ab!----c-------------")
        #expect(run == "a-b---------c")
    }

    @Test func flushWithNothingHeldLeavesTheWindowAsItIs() {
        #expect(throttled("a!--------b----------") == "a---------b")
        #expect(throttled("!-a") == "--a")
    }

    @Test func finishHandsOnTheHeldOutputThenFinishes() {
        let run = throttled("ab|c-----------")
        #expect(run == "a-(b|)")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.received == 2)
    }

    @Test func finishInsideAnEmptyWindowJustFinishes() {
        let run = throttled("a|----------")
        #expect(run == "a|")
        #expect(run.pendingTimers == 0)
    }

    @Test func cancelDiscardsTheHeldOutputAndTheTimer() {
        let run = throttled("ab^----------c")
        #expect(run == "a-^")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.delivered == 1)
    }

    @Test func latestFalseKeepsTheFirstHeldOutputThroughFlush() {
        #expect(throttled("abc!", latest: false) == "a--b")
    }
}
