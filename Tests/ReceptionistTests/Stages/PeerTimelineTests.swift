import Testing

@testable import Receptionist

/// The peers' own timelines, replayed against our stages on the manual clock: OpenCombine's
/// (which its maintainers also run against Apple's Combine), RxSwift's, swift-async-algorithms'
/// and lodash's. Each test names the peer's test, gives the peer's output in a comment, and
/// asserts ours; where they differ, the comment says why in one line, and the Stages article
/// ("Where this differs from …") says it for users.
///
/// Timelines are written as the peers' tests write them: `value@time`, `|@time` for the end of
/// the input (`finish()` here), one tick per time unit. Within a tick, timers due at that instant
/// fire before the tick's inputs, as in `Marbles` (whose notation the async-algorithms cases use
/// directly, since their tests are diagrams too).
@Suite struct PeerTimelineTests {
    typealias Stages<Output: Sendable> =
        (Pipeline<ReceptionistInput<String>, String>, ManualScheduler) -> Pipeline<ReceptionistInput<String>, Output>

    /// Replays `input` ("value@time …") until tick `end`, one tick per `unit`, through `stages`;
    /// returns what reached the task block as "value@time …", with "|@time" when the pipeline
    /// finished.
    private func replay(
        _ input: String,
        until end: Int,
        unit: Duration = .milliseconds(1),
        arrival: Marbles.Arrival = .afterTimers,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ stages: @escaping Stages<String>
    ) -> String {
        var ticks = Array(repeating: [String](), count: end + 1)
        for event in input.split(separator: " ") {
            let parts = event.split(separator: "@").map(String.init)
            guard parts.count == 2, let at = Int(parts[1]), (0...end).contains(at) else {
                Issue.record("PeerTimelineTests: malformed event \(event)", sourceLocation: sourceLocation)
                continue
            }
            ticks[at].append(parts[0] == "|" ? "|" : Marbles.token(parts[0]))
        }
        let diagram = ticks.map { $0.isEmpty ? "-" : $0.count == 1 ? $0[0] : "(" + $0.joined() + ")" }.joined()
        let seen = Recorder<String>()
        let build: (ManualScheduler, @escaping @Sendable (String) -> Void) -> MarbleSubject = { clock, _ in
            let time: @Sendable () -> Int = { Int((clock.now.offset / unit).rounded()) }
            let receptionist = stages(Receptionist.pipeline(of: String.self), clock).deliver(on: .immediate) {
                seen.append("\($0)@\(time())")
            }
            return .receptionist(receptionist) { seen.append("|@\(time())") }
        }
        _ = Marbles(tick: unit, arrival: arrival).run(diagram, sourceLocation: sourceLocation, build)
        return seen.values.joined(separator: " ")
    }

    /// A receptionist through `stages`, on `Marbles`' diagrams (tick = 1 ms).
    private func diagram<Output: MarbleValue & Sendable>(
        _ input: String,
        _ stages: @escaping Stages<Output>
    ) -> MarbleRun {
        Marbles().run(input) { clock, out in
            .receptionist(stages(Receptionist.pipeline(of: String.self), clock).deliver(on: .immediate, out))
        }
    }

    // MARK: - Combine (OpenCombine's ThrottleTests and DebounceTests; one tick = 1 s, or 1 ns)

    /// OpenCombine `ThrottleTests.testThrottleGap`: `throttle(for: 60 s, latest: false)`.
    @Test func combineThrottleLatestFalseIsOurLatestFalseNotTrailingFalse() {
        let input = "0@0 1@45 2@121"
        // Combine: 0@0 1@60 2@121. Ours with `latest: false`: the same.
        #expect(
            replay(input, until: 200, unit: .seconds(1)) {
                $0.throttle(for: .seconds(60), scheduler: $1, latest: false)
            } == "0@0 1@60 2@121")
        // Ours with `leading: true, trailing: false`: 1 is dropped, it arrived inside 0's window.
        #expect(
            replay(input, until: 200, unit: .seconds(1)) {
                $0.throttle(for: .seconds(60), scheduler: $1, leading: true, trailing: false)
            } == "0@0 2@121")
    }

    /// OpenCombine `ThrottleTests.testThrottleDemand` (up to its demand running out):
    /// `throttle(for: 1337 s, latest: false)`; 1, 5, 6 at 0, the scheduler runs, then 2 at 0.
    @Test func combineThrottleHandsOnItsLeadingOutputThroughTheScheduler() {
        let input = "1@0 5@0 6@0 2@0"
        // Combine: 1@0 2@1337. 5 and 6 arrive while 1 waits for the scheduler, so they are not
        // "first in a window": dropped. 2, the first after 1 went out, is the window's output.
        // Ours with `trailing: false`: 1@0 only; 2 is lost.
        #expect(
            replay(input, until: 1400, unit: .seconds(1)) {
                $0.throttle(for: .seconds(1337), scheduler: $1, leading: true, trailing: false)
            } == "1@0")
        // Ours with `latest: false`: 1 is handed on at once, so 5 is the first of its window.
        #expect(
            replay(input, until: 1400, unit: .seconds(1)) {
                $0.throttle(for: .seconds(1337), scheduler: $1, latest: false)
            } == "1@0 5@1337")
    }

    /// OpenCombine `ThrottleTests.testBasicBehavior`: `throttle(for: 1337 s, latest: true)`;
    /// 1, 2, 3 at 0, the scheduler runs, 4 at 0, then the input ends (a failure there; `.finished`
    /// is held the same way, `testReceiveCompletionImmediatelyAfterValue`).
    @Test func combineThrottleLatestTrueLeadsWithTheLatestBeforeTheSchedulerRuns() {
        // Combine: 3@0 4@1337 |@1337: one output at 0, the latest when the scheduler ran, and
        // the input's end waits for the window. Ours: 1 at once, then 4, handed on by finish().
        #expect(
            replay("1@0 2@0 3@0 4@0 |@0", until: 1400, unit: .seconds(1)) {
                $0.throttle(for: .seconds(1337), scheduler: $1, latest: true)
            } == "1@0 4@0 |@0")
        // Without the end: ours 1@0 3@1337 where Combine gives 3@0 only.
        #expect(
            replay("1@0 2@0 3@0", until: 1400, unit: .seconds(1)) {
                $0.throttle(for: .seconds(1337), scheduler: $1, latest: true)
            } == "1@0 3@1337")
    }

    /// OpenCombine `DebounceTests.testBasicBehavior`: `debounce(for: 13 ns)`, then `.finished`.
    @Test func combineDebounceMatchesUntilTheEnd() {
        // Combine: 3@22 |@200. Ours: the same.
        #expect(
            replay("1@0 2@4 3@9 |@200", until: 300, unit: .nanoseconds(1)) {
                $0.debounce(for: .nanoseconds(13), scheduler: $1)
            } == "3@22 |@200")
    }

    /// OpenCombine `DebounceTests.testFailBeforeDue`, which ends with `.finished`
    /// (`testFinishBeforeDue` ends with a failure, and drops the value the same way).
    @Test func combineDebounceDropsThePendingValueWhenTheInputFinishes() {
        // Combine: |@4, 1 is dropped. Ours: finish() hands 1 on, then finishes.
        #expect(
            replay("1@0 |@4", until: 100, unit: .nanoseconds(1)) {
                $0.debounce(for: .nanoseconds(13), scheduler: $1)
            } == "1@4 |@4")
    }

    // MARK: - RxSwift (Observable+ThrottleTests; window 200, subscribed at 200: 1@150 is not seen)

    private let rxInput = "2@210 3@250 4@310 5@350 6@410 7@450"

    /// RxSwift `test_ThrottleTimeSpan_NotLatest_Completed` and `_NotLatest_NoEnd`.
    @Test func rxThrottleLatestFalseIsOurLeadingWithoutTrailing() {
        // RxSwift: 2@210 6@410 |@500, and 2@210 6@410 without the end. Ours: the same.
        #expect(
            replay(rxInput + " |@500", until: 1000) {
                $0.throttle(for: .milliseconds(200), scheduler: $1, leading: true, trailing: false)
            } == "2@210 6@410 |@500")
        #expect(
            replay(rxInput, until: 1000) {
                $0.throttle(for: .milliseconds(200), scheduler: $1, leading: true, trailing: false)
            } == "2@210 6@410")
        // Ours with `latest: false` keeps the first of each window for its end: not RxSwift's.
        #expect(
            replay(rxInput + " |@500", until: 1000) {
                $0.throttle(for: .milliseconds(200), scheduler: $1, latest: false)
            } == "2@210 3@410 6@500 |@500")
        #expect(
            replay(rxInput, until: 1000) {
                $0.throttle(for: .milliseconds(200), scheduler: $1, latest: false)
            } == "2@210 3@410 6@610")
    }

    /// RxSwift `test_ThrottleTimeSpan_Completed` and `_NoEnd` (`latest: true`, RxSwift's default).
    @Test func rxThrottleLatestTrueDiffersAtTheWindowBoundaryAndTheEnd() {
        // RxSwift: 2@210 6@410 7@610 |@610. 6 arrives exactly at the end of 2's window: RxSwift
        // hands 6 on and drops the held 5; ours hands on 5 and holds 6 (then 7) for the next
        // window. The end: RxSwift waits for the window, finish() hands 7 on at once.
        #expect(
            replay(rxInput + " |@500", until: 1000) {
                $0.throttle(for: .milliseconds(200), scheduler: $1, latest: true)
            } == "2@210 5@410 7@500 |@500")
        // RxSwift without the end: 2@210 6@410 7@610.
        #expect(
            replay(rxInput, until: 1000) {
                $0.throttle(for: .milliseconds(200), scheduler: $1, latest: true)
            } == "2@210 5@410 7@610")
    }

    // MARK: - swift-async-algorithms (TestThrottle, TestChunk, TestDebounce; their diagrams)

    /// `TestThrottle.test_rate_2` and `test_rate_2_leading_edge`: `_throttle(for: .steps(2))`.
    @Test func asyncAlgorithmsThrottleHandsOnTheElementArrivingAtTheBoundary() {
        let input = "abcdefghijk|"
        // async-algorithms, latest: "a-c-e-g-i-k|": at 2, c arrives and is handed on, b dropped.
        // Ours: b, held, is handed on at 2 and c waits for the next window; finish() hands on k.
        #expect(diagram(input) { $0.throttle(for: .milliseconds(2), scheduler: $1, latest: true) } == "a-b-d-f-h-j(k|)")
        // async-algorithms, latest: false: "a-b-d-f-h-j|": the held b is handed on as c arrives,
        // and c is consumed by it (so is k). Ours keeps each window's first: c, e, …, and k.
        #expect(
            diagram(input) { $0.throttle(for: .milliseconds(2), scheduler: $1, latest: false) } == "a-b-c-e-g-i(k|)")
    }

    /// `TestThrottle.test_emission_2_rate_3`: `_throttle(for: .steps(3))`, an element every 2.
    @Test func asyncAlgorithmsThrottleHasNoTrailingTimer() {
        // async-algorithms: "-a---c---e---g---i---k-|": a held element goes out only when the
        // next one arrives, and the arriving one replaces it. Ours: at each window's end.
        #expect(
            diagram("-a-b-c-d-e-f-g-h-i-j-k-|") { $0.throttle(for: .milliseconds(3), scheduler: $1, latest: true) }
                == "-a--b--c--e--f--h--i--k|")
    }

    /// `TestThrottle.test_rate_3`: the end of the input.
    @Test func asyncAlgorithmsThrottleDelaysTheLastElementOurFinishDoesNot() {
        // async-algorithms: "a--d--g--j--[k|]": k waits until 3 after j. Ours: finish() hands
        // on k at once (and the windows end on their own: c, f, i).
        #expect(
            diagram("abcdefghijk|") { $0.throttle(for: .milliseconds(3), scheduler: $1, latest: true) }
                == "a--c--f--i-(k|)")
    }

    /// `TestChunk.test_time_emptyChunks` and `test_time_equalChunks`:
    /// `chunked(by: .repeating(every: .steps(n)))`, a periodic timer.
    @Test func asyncAlgorithmsChunksAreTimedByAPeriodicTimerOursFromTheFirstElement() {
        // async-algorithms: "-- -1 --|": 1 arrives at 2 and goes out at the next tick, 3.
        // Ours: 2 after it arrived.
        #expect(diagram("-- 1- --|") { $0.batch(every: .milliseconds(2), scheduler: $1) } == "----[1]-|")
        // async-algorithms: "---'ABC'---'DEF'---'GHI'|": ticks at 3, 7, 11. Ours: 4 after A, D, G.
        #expect(
            diagram("ABC-DEF-GHI-|") { $0.batch(every: .milliseconds(4), scheduler: $1) }
                == "----[ABC]---[DEF]---([GHI]|)")
    }

    /// `TestChunk.test_timeAndCount_countAlwaysPrevails` and `…_countResetsAfterSignal`:
    /// `chunks(ofCount:or: .repeating(every: .steps(8)))`.
    @Test func asyncAlgorithmsChunksOfCountOrTimerMatchOnCount() {
        // async-algorithms: "-'AB'----'AB'-|". Ours: the same.
        #expect(
            diagram("AB--A-B-|") { $0.batch(count: 2, every: .milliseconds(8), scheduler: $1) } == "-[AB]----[AB]-|")
        // async-algorithms: "-------'AB'----'ABCDE'|": the tick at 7. Ours: 8 after A.
        #expect(
            diagram("AB------ABCDE|") { $0.batch(count: 5, every: .milliseconds(8), scheduler: $1) }
                == "--------[AB]---[ABCDE]|")
    }

    /// `TestChunk.test_group`, `_singleValue`, `_singleGroup`, `_error`: `chunked(by:)`, a
    /// predicate over neighbours (here `batch(while:)`).
    @Test func asyncAlgorithmsChunkedByMatchesBatchWhile() {
        let sameCase: Stages<[String]> = { stages, _ in
            stages.batch(while: { ($0.uppercased() == $0) == ($1.uppercased() == $1) })
        }
        // async-algorithms: "---'ABC'--'def'-'GH'-'ij'K[l|]". Ours: the same.
        #expect(diagram("ABCdefGHijKl|", sameCase) == "---[ABC]--[def]-[GH]-[ij][K]([l]|)")
        // async-algorithms: "-----[A|]", "-----['ABCDE'|]". Ours: the same.
        #expect(diagram("A----|", sameCase) == "-----([A]|)")
        #expect(diagram("ABCDE|") { stages, _ in stages.batch(while: { _, _ in true }) } == "-----([ABCDE]|)")
        // async-algorithms: "--^", the open chunk dropped by the error. Ours: cancel() drops it
        // too (finish() would hand it on).
        #expect(diagram("AB^", sameCase) == "--^")
    }

    /// `TestChunk.test_projection`, `_singleValue`, `_singleGroup`, `_error`: `chunked(on:)`, a
    /// projected key (here `batch(by:)`), each chunk shown by its elements' first characters.
    @Test func asyncAlgorithmsChunkedOnMatchesBatchBy() {
        let byLetter: Stages<String> = { stages, _ in
            stages.batch(by: { $0.first!.lowercased() }).map { $0.map { String($0.first!) }.joined() }
        }
        // async-algorithms: "---'AAa'--'bBb'-['cC'|]". Ours: the same. (Its chunks come with
        // their key, `(key, chunk)`; ours are the batch alone: the key is that of any element.)
        #expect(diagram("A'Aa''ab'b'BB''bb''cc''CC'|", byLetter) == "---'AAa'--'bBb'-('cC'|)")
        // async-algorithms: "-----[A|]", "-----['ABCDE'|]", "--^". Ours: the same.
        #expect(diagram("A----|", byLetter) == "-----(A|)")
        #expect(
            diagram("ABCDE|") { stages, _ in stages.batch(by: { _ in 42 }).map { $0.joined() } } == "-----('ABCDE'|)")
        #expect(diagram("Aa^", byLetter) == "--^")
    }

    /// `TestChunk.test_signal_*`: `chunked(by: signal)`, a chunk handed on when a second sequence
    /// emits. Here the signal is `flush()` (`!`), and a batch that only the signal closes is
    /// `batch(while: { _, _ in true })`.
    @Test func asyncAlgorithmsChunkingOnASignalIsFlush() {
        let untilFlushed: Stages<[String]> = { stages, _ in stages.batch(while: { _, _ in true }) }
        // equalChunks, async-algorithms: "---'ABC'---'DEF'---'GHI'|". Ours: the same.
        #expect(diagram("ABC!DEF!GHI!|", untilFlushed) == "---[ABC]---[DEF]---[GHI]|")
        // unequalChunks, async-algorithms: "--'AB'-A--------'ABCDEFGH'|". Ours: the same.
        #expect(diagram("AB!A!ABCDEFGH!|", untilFlushed) == "--[AB]-[A]--------[ABCDEFGH]|")
        // emptyChunks, async-algorithms: "---1-|": a signal with nothing open hands on nothing.
        #expect(diagram("!!1!!|", untilFlushed) == "---[1]-|")
        // error, async-algorithms: "--^". Ours: cancel() drops the open batch.
        #expect(diagram("AB^", untilFlushed) == "--^")
        // unsignaledTrailingChunk, async-algorithms: "---3---[3|]" (each chunk summed).
        #expect(
            diagram("111!111|") { stages, _ in
                stages.batch(while: { _, _ in true }).map { String($0.reduce(0) { $0 + Int($1)! }) }
            } == "---3---(3|)")
    }

    /// `TestChunk.test_signalAndCount_*`: `chunks(ofCount:or: signal)`; here `batch(count:)`
    /// and `flush()`.
    @Test func asyncAlgorithmsChunksOfCountOrSignalIsBatchCountAndFlush() {
        // signalAlwaysPrevails (count 42), async-algorithms: "--'AB'-A--------'ABCDEFGH'|".
        #expect(diagram("AB!A!ABCDEFGH!|") { stages, _ in stages.batch(count: 42) } == "--[AB]-[A]--------[ABCDEFGH]|")
        // countAlwaysPrevails (count 2), async-algorithms: "-'AB'----'AB'-|".
        #expect(diagram("AB!-A-B!|") { stages, _ in stages.batch(count: 2) } == "-[AB]----[AB]-|")
        // countResetsAfterCount (count 5), async-algorithms: "----'ABCDE'-----'ABCDE'|".
        #expect(diagram("ABCDE-ABCDE|") { stages, _ in stages.batch(count: 5) } == "----[ABCDE]-----[ABCDE]|")
        // countResetsAfterSignal (count 5), async-algorithms: "--'AB'----'ABCDE'|".
        #expect(diagram("AB!ABCDE|") { stages, _ in stages.batch(count: 5) } == "--[AB]----[ABCDE]|")
        // error (count 5), async-algorithms: "---^".
        #expect(diagram("ABC^") { stages, _ in stages.batch(count: 5) } == "---^")
    }

    /// `TestDebounce.test_delayingValues`, `test_delayingValues_dangling_last`,
    /// `test_finishDoesntDebounce`: `debounce(for: .steps(3))`.
    @Test func asyncAlgorithmsDebounceMatches() {
        let debounce: Stages<String> = { $0.debounce(for: .milliseconds(3), scheduler: $1) }
        // async-algorithms: "------d----e-----g-|", "------d----e----[g|]", "-[a|]". Ours: the same.
        #expect(diagram("abcd----e---f-g----|", debounce) == "------d----e-----g-|")
        #expect(diagram("abcd----e---f-g-|", debounce) == "------d----e----(g|)")
        #expect(diagram("a|", debounce) == "-(a|)")
    }

    // MARK: - lodash (`_.debounce(func, wait, { maxWait })`; one tick = 1 ms)
    //
    // lodash's own tests read call counts at real-time instants; the invocation times below are
    // those of lodash 4.17's `debounce` run on a virtual clock (`_.runInContext` with a `Date.now`
    // and a `setTimeout` of our own, timers due at an instant firing before its calls but where
    // the test says otherwise).

    /// lodash's tests "should support a `maxWait` option" (wait 32, maxWait 64), "should cancel
    /// `maxDelayed` when `delayed` is invoked" (the same) and "should queue a trailing call for
    /// subsequent debounced calls after `maxWait`" (wait 200, maxWait 200).
    @Test func lodashMaxWaitTestsMatch() {
        // lodash: invoked at 32 and 160 (its test reads the count at 128 and 256). Ours: the same.
        #expect(
            replay("a@0 b@0 c@128 d@128", until: 256) {
                $0.debounce(for: .milliseconds(32), maxWait: .milliseconds(64), scheduler: $1)
            } == "b@32 d@160")
        // lodash: invoked at 32 and 160. Ours: the same.
        #expect(
            replay("a@0 b@128", until: 192) {
                $0.debounce(for: .milliseconds(32), maxWait: .milliseconds(64), scheduler: $1)
            } == "a@32 b@160")
        // lodash: invoked at 200 (maxWait) and 400 (maxWait again, counted from the call at 200).
        #expect(
            replay("a@0 b@190 c@200 d@210", until: 500) {
                $0.debounce(for: .milliseconds(200), maxWait: .milliseconds(200), scheduler: $1)
            } == "b@200 d@400")
    }

    /// lodash's `maxWait` counts from its last invocation; ours from the first element of the
    /// burst. Calls every 3 ms, wait 4, maxWait 10.
    @Test func lodashMaxWaitCountsFromTheLastInvocationOursFromTheBurst() {
        // lodash: d@10 g@20 i@28: the second maxWait runs from the invocation at 10. Ours: the
        // burst after d begins with e at 12, so its maxWait ends at 22.
        #expect(
            replay("a@0 b@3 c@6 d@9 e@12 f@15 g@18 h@21 i@24", until: 40) {
                $0.debounce(for: .milliseconds(4), maxWait: .milliseconds(10), scheduler: $1)
            } == "d@10 h@22 i@28")
    }

    /// lodash's "should support `maxWait` in a tight loop": a call made when `maxWait` has passed
    /// but the timer has not fired yet (a busy loop) invokes with that call's arguments. Here:
    /// inputs before the timers of their instant. Calls every 1 ms, wait 3, maxWait 5.
    @Test func lodashMaxWaitInATightLoopHandsOnTheArrivingCall() {
        // lodash: f@5 k@10: the call arriving at the deadline is invoked and nothing is left
        // pending. Ours: the pending element is handed on (e, j) and the arriving one starts the
        // next burst, so k is handed on 3 after it.
        #expect(
            replay("a@0 b@1 c@2 d@3 e@4 f@5 g@6 h@7 i@8 j@9 k@10", until: 20, arrival: .beforeTimers) {
                $0.debounce(for: .milliseconds(3), maxWait: .milliseconds(5), scheduler: $1)
            } == "e@5 j@10 k@13")
    }
}
