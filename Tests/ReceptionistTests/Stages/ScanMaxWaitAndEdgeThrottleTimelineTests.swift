import Testing

@testable import Receptionist

/// `scan`, `debounce(for:maxWait:)` and `throttle(for:leading:trailing:)` as timelines
/// (tick = 1 ms), and their invalid configurations.
@Suite struct ScanMaxWaitAndEdgeThrottleTimelineTests {
    private func run(
        _ input: String,
        marbles: Marbles = Marbles(),
        _ stages:
            @escaping (Pipeline<ReceptionistInput<String>, String>, ManualScheduler) -> Pipeline<
                ReceptionistInput<String>, String
            >
    ) -> MarbleRun {
        marbles.run(input) { clock, out in
            .receptionist(stages(Receptionist.pipeline(of: String.self), clock).deliver(on: .immediate, out))
        }
    }

    // MARK: scan

    @Test func scanHandsOnTheRunningResult() {
        #expect(run("a-b--c|") { pipeline, _ in pipeline.scan("") { $0 + $1 } } == "a-'ab'--'abc'|")
    }

    @Test func eachStartOfAPipelineScansFromTheInitialResult() {
        let pipeline = Receptionist.pipeline(of: Int.self).scan(100) { $0 + $1 }
        let first = Recorder<Int>()
        let second = Recorder<Int>()
        let a = pipeline.deliver(on: .immediate) { first.append($0) }
        let b = pipeline.deliver(on: .immediate) { second.append($0) }
        for value in 1...3 { a.send(value) }
        b.send(5)
        #expect(first.values == [101, 103, 106])
        #expect(second.values == [105])
    }

    // MARK: debounce(for:maxWait:)

    @Test func maxWaitHandsOnUnderConstantInput() {
        // An output every tick, never quiet for 3 ticks: without maxWait nothing until the end.
        let input = "abcdefghijk-----"
        #expect(
            run(input) { pipeline, clock in pipeline.debounce(for: .milliseconds(3), scheduler: clock) }
                == "-------------k")
        // With maxWait 5: the pending output at most 5 ticks after its burst began (a at 0:
        // e at 5; f at 5 begins the next burst: j at 10), and k, when the input is quiet.
        #expect(
            run(input) { pipeline, clock in
                pipeline.debounce(for: .milliseconds(3), maxWait: .milliseconds(5), scheduler: clock)
            } == "-----e----j--k"
        )
    }

    @Test func maxWaitChangesNothingWhenTheInputGoesQuiet() {
        let input = "ab---c-------"
        #expect(
            run(input) { pipeline, clock in
                pipeline.debounce(for: .milliseconds(3), maxWait: .milliseconds(10), scheduler: clock)
            } == "----b---c"
        )
    }

    @Test func maxWaitEqualToTheIntervalHandsOnEveryInterval() {
        #expect(
            run("abcdefg----") { pipeline, clock in
                pipeline.debounce(for: .milliseconds(2), maxWait: .milliseconds(2), scheduler: clock)
            } == "--b-d-f-g"
        )
    }

    // MARK: throttle(for:leading:trailing:)

    @Test func bothEdgesHandOnTheFirstAtOnceAndTheLatestAtTheWindowEnd() {
        // a at once; d, the latest of a's window, at 4; e, held in d's window, at 8; f at 12.
        #expect(
            run("abcde------f----") { pipeline, clock in
                pipeline.throttle(for: .milliseconds(4), scheduler: clock, leading: true, trailing: true)
            } == "a---d---e---f"
        )
    }

    @Test func leadingOnlyDropsWhatArrivesInsideAWindow() {
        // b, c and d arrive inside a's window and are dropped (so may be the last state:
        // documented); e arrives once the window ended and passes at once, as f does.
        #expect(
            run("abcde------f") { pipeline, clock in
                pipeline.throttle(for: .milliseconds(4), scheduler: clock, leading: true, trailing: false)
            } == "a---e------f"
        )
    }

    @Test func trailingOnlyHandsOnTheLatestOfEachWindowWhenItEnds() {
        #expect(
            run("abcde------f----") { pipeline, clock in
                pipeline.throttle(for: .milliseconds(4), scheduler: clock, leading: false, trailing: true)
            } == "----d---e---f"
        )
    }

    @Test func trailingOnlyFlushAndFinishHandOnWhatIsHeld() {
        #expect(
            run("ab!c|") { pipeline, clock in
                pipeline.throttle(for: .milliseconds(10), scheduler: clock, leading: false, trailing: true)
            } == "--b-(c|)"
        )
    }

    // MARK: Invalid configuration

    @Test(.exitTest) func invalidConfigurationsAreRejectedNamingTheParameter() async {
        func message(_ result: ExitTest.Result?) -> String {
            String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        }
        var result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).debounce(
                for: .milliseconds(10), maxWait: .milliseconds(5), scheduler: ManualScheduler())
        }
        #expect(message(result).contains("debounce(for:maxWait:) maxWait must be at least interval"))
        result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).debounce(
                for: .zero, maxWait: .milliseconds(5), scheduler: ManualScheduler())
        }
        #expect(message(result).contains("debounce(for:maxWait:) interval must be greater than zero"))
        result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).throttle(
                for: .seconds(1), scheduler: ManualScheduler(), leading: false, trailing: false)
        }
        #expect(message(result).contains("throttle(for:leading:trailing:) leading and trailing are both false"))
    }
}
