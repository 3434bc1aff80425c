import Testing

@testable import Receptionist

/// The marble notation itself, chains of stages, and the life of a running pipeline (flush,
/// finish, cancel, release, re-entrant calls from its task block, the observed model going away),
/// as timelines on a `ManualScheduler` (tick = 1 ms).
@Suite struct StageTimelineTests {
    /// The stages of a pipeline fed by `send`, up to `Output`.
    typealias Sent<Output: Sendable> = Pipeline<ReceptionistInput<String>, Output>
    /// The stages of an observation of `TimelineModel.text`, up to `Output`.
    typealias Observing<Output: Sendable> = Pipeline<ObservedProperty<TimelineModel, String>, Output>

    /// A receptionist through `stages`, delivering on `.immediate`.
    private func piped<Output: MarbleValue & Sendable>(
        _ input: String,
        marbles: Marbles = Marbles(),
        _ stages: @escaping (Sent<String>, ManualScheduler) -> Sent<Output>
    ) -> MarbleRun {
        marbles.run(input) { clock, out in
            .receptionist(stages(Receptionist.pipeline(of: String.self), clock).deliver(on: .immediate, out))
        }
    }

    /// An observation of a fresh `TimelineModel`'s `text` through `stages`.
    private func observed<Output: MarbleValue & Sendable>(
        _ input: String,
        _ stages: @escaping (PropertyObservation<TimelineModel, String>, ManualScheduler) -> Observing<Output>
    ) -> MarbleRun {
        Marbles().run(input) { clock, out in
            let model = TimelineModel()
            let token = stages(model.receptionist(for: \.text), clock).deliver(on: .immediate, out)
            return .observation(of: model, token: token) { $0.text = $1 }
        }
    }

    // MARK: - The notation

    @Test func parsesEveryInputSymbol() {
        let ticks = Marbles.parse("a(b!) -'xy'|^#", sourceLocation: #_sourceLocation)
        let expected: [[MarbleInput]] = [
            [.send("a")], [.send("b"), .flush], [], [.send("xy")], [.finish], [.cancel], [.releaseSource],
        ]
        #expect(ticks == expected)
    }

    @Test func malformedDiagramsAreReported() {
        withKnownIssue { _ = Marbles.parse("a?b", sourceLocation: #_sourceLocation) }
        withKnownIssue { _ = Marbles.parse("(a-b)", sourceLocation: #_sourceLocation) }
        withKnownIssue { _ = Marbles.parse("((ab))", sourceLocation: #_sourceLocation) }
        withKnownIssue { _ = Marbles.parse("(ab", sourceLocation: #_sourceLocation) }
        withKnownIssue { _ = Marbles.parse("ab)", sourceLocation: #_sourceLocation) }
        withKnownIssue { _ = Marbles.parse("'ab", sourceLocation: #_sourceLocation) }
        withKnownIssue { _ = piped("#") { pipeline, _ in pipeline } }
    }

    @Test func diagramsCompareWithoutSpacesAndTrailingDashes() {
        #expect(MarbleDiagram("a - b--") == "a-b")
        #expect(MarbleDiagram("a - b--") != "a-b-c")
        #expect(MarbleDiagram("-") == "")
        #expect(MarbleDiagram("-a") != "a")
    }

    @Test func aPipelineWithoutStagesEchoesItsInput() {
        #expect(piped("a-b-c|") { pipeline, _ in pipeline } == "a-b-c|")
        #expect(piped("a - b") { pipeline, _ in pipeline } == "a-b")
    }

    @Test func groupsQuotesCancelAndFinishRenderAsDocumented() {
        #expect(piped("(ab)-c") { pipeline, _ in pipeline.map { $0 } } == "(ab)-c")
        #expect(piped("'foo'-b") { pipeline, _ in pipeline.map { $0 } } == "'foo'-b")
        #expect(piped("a(b|)c") { pipeline, _ in pipeline.map { $0 } } == "a(b|)")
        #expect(piped("a^b") { pipeline, _ in pipeline.map { $0 } } == "a^")
        #expect(piped("ab-") { pipeline, _ in pipeline.map { [$0, $0 + $0] } } == "[a'aa'][b'bb']")
        #expect(piped("a!|") { pipeline, _ in pipeline.batch(count: 2) } == "-[a]|")
    }

    @Test func anOutputBetweenTwoTicksBelongsToTheNextTick() {
        let run = piped("a-----") { pipeline, clock in
            pipeline.batch(every: .microseconds(2500), scheduler: clock)
        }
        #expect(run == "---[a]")
    }

    @Test func aTickMayBeAnyDuration() {
        let run = piped("a----b-----", marbles: Marbles(tick: .milliseconds(10))) { pipeline, clock in
            pipeline.batch(every: .milliseconds(50), scheduler: clock)
        }
        #expect(run == "-----[a]----[b]")
    }

    @Test(arguments: [(Marbles.Arrival.afterTimers, "--(ta)"), (.beforeTimers, "--(at)")])
    func arrivalDecidesWhetherInputsComeBeforeTimersOfTheirTick(arrival: Marbles.Arrival, expected: String) {
        let run = Marbles(arrival: arrival).run("--a") { clock, out in
            // A stand-in for a stage's timer, armed while the pipeline is built.
            clock.submit(at: .zero + .milliseconds(2)) { out("t") }
            return .receptionist(Receptionist.pipeline(of: String.self).deliver(on: .immediate, out))
        }
        #expect(run == MarbleDiagram(expected))
    }

    // MARK: - Chains

    @Test func removeDuplicatesThenBatch() {
        let run = piped("aabbbcd-----") { pipeline, clock in
            pipeline.removeDuplicates().batch(count: 2, every: .milliseconds(5), scheduler: clock)
        }
        // a 0, b 2 (count), c 5, d 6 (count).
        #expect(run == "--[ab]---[cd]")
    }

    @Test func filterThenThrottleThenBatch() {
        let run = piped("a2b4c6d8-----|") { pipeline, clock in
            pipeline
                .filter { Int($0) != nil }
                .throttle(for: .milliseconds(4), scheduler: clock, latest: true)
                .batch(count: 2)
        }
        // Digits at 1 3 5 7; throttled 2 at 1, 4 at 5, 8 at 9; batched by two; finish hands on [8].
        #expect(run == "-----[24]-------([8]|)")
    }

    @Test func mapThenDebounceThenRemoveDuplicates() {
        let run = piped("aA---A---b---B---") { pipeline, clock in
            pipeline
                .map { $0.lowercased() }
                .debounce(for: .milliseconds(3), scheduler: clock)
                .removeDuplicates()
        }
        // Debounced a at 4, a at 8 (dropped), b at 12, b at 16 (dropped).
        #expect(run == "----a-------b")
    }

    @Test func eachTimedStageArmsItsOwnTimerAndCancelDisarmsThemAll() {
        let stages: (Sent<String>, ManualScheduler) -> Sent<[String]> = { pipeline, clock in
            pipeline
                .throttle(for: .milliseconds(2), scheduler: clock, latest: true)
                .batch(every: .milliseconds(5), scheduler: clock)
        }
        let running = piped("ab", stages)
        #expect(running == "")
        #expect(running.pendingTimers == 2)
        let cancelled = piped("ab^------", stages)
        #expect(cancelled == "--^")
        #expect(cancelled.pendingTimers == 0)
        // Throttled a 0, b 2, c 4: all inside the batch opened at 0, closed at 5.
        #expect(piped("abc----", stages) == "-----[abc]")
    }

    @Test func flushReachesEveryStageInOrder() {
        let run = piped("ab!") { pipeline, clock in
            pipeline
                .throttle(for: .milliseconds(10), scheduler: clock, latest: true)
                .batch(count: 10, every: .milliseconds(20), scheduler: clock)
        }
        // The throttle hands b to the batch, then the batch hands on [ab].
        #expect(run == "--[ab]")
        // The flushed b opened a throttle window; the batch's timer was disarmed.
        #expect(run.pendingTimers == 1)
        #expect(run.nextDeadline == .zero + .milliseconds(12))
    }

    @Test func finishReachesEveryStageInOrder() {
        let run = piped("abc|---------") { pipeline, clock in
            pipeline
                .debounce(for: .milliseconds(5), scheduler: clock)
                .batch(count: 10)
        }
        #expect(run == "---([c]|)")
        #expect(run.pendingTimers == 0)
        #expect(run.isFinished)
    }

    @Test func cancelDiscardsWhatEveryStageHolds() {
        let run = piped("ab-----c^-------------") { pipeline, clock in
            pipeline
                .debounce(for: .milliseconds(5), scheduler: clock)
                .batch(count: 10, every: .milliseconds(10), scheduler: clock)
        }
        // b reached the batch at 6; c waits in the debounce; both are discarded.
        #expect(run == "--------^")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.received == 0)
    }

    @Test func deliveringOnTheSchedulerGivesTheSameTimeline() {
        let stages: (ManualScheduler) -> Sent<[String]> = { clock in
            Receptionist.pipeline(of: String.self)
                .filter { $0 != "x" }
                .throttle(for: .milliseconds(3), scheduler: clock, latest: true)
                .batch(count: 2, every: .milliseconds(4), scheduler: clock)
        }
        let input = "axbcxd-e--|"
        let onClock = Marbles().run(input) { clock, out in .receptionist(stages(clock).deliver(on: clock, out)) }
        let immediate = Marbles().run(input) { clock, out in .receptionist(stages(clock).deliver(on: .immediate, out)) }
        #expect(onClock.diagram == immediate.diagram)
        // Throttled a 0, b 3, d 6, e 9; batched by count at 3 and 9.
        #expect(onClock == "---[ab]-----[de]|")
    }

    // MARK: - Observed models

    @Test func anObservedPropertyRunsThroughStagesLikeSentValues() {
        let run = observed("abc-d-----|") { changes, clock in
            changes.map { $0.newValue }.batch(count: 3, every: .milliseconds(5), scheduler: clock)
        }
        #expect(run == "--[abc]------[d]|")
    }

    @Test func finishingTheTokenHandsOnWhatStagesHoldThenStopsTakingChanges() {
        let run = observed("ab|c-----") { changes, clock in
            changes.map { $0.newValue }.throttle(for: .milliseconds(10), scheduler: clock, latest: true)
        }
        #expect(run == "a-(b|)")
        #expect(run.pendingTimers == 0)
    }

    @Test func deallocatingTheModelFinishesWithThePartialBatch() {
        let run = observed("ab#-----------") { changes, clock in
            changes.map { $0.newValue }.batch(count: 10, every: .milliseconds(10), scheduler: clock)
        }
        #expect(run == "--([ab]|)")
        #expect(run.isSourceAlive == false)
        #expect(run.isFinished)
        #expect(run.pendingTimers == 0)
    }

    @Test func deallocatingTheModelHandsOnTheHeldThrottleAndDebounceValues() {
        let throttled = observed("ab#") { changes, clock in
            changes.map { $0.newValue }.throttle(for: .milliseconds(10), scheduler: clock, latest: true)
        }
        #expect(throttled == "a-(b|)")
        let debounced = observed("ab#") { changes, clock in
            changes.map { $0.newValue }.debounce(for: .milliseconds(10), scheduler: clock)
        }
        #expect(debounced == "--(b|)")
        #expect(debounced.isSourceAlive == false)
    }

    @Test func deallocatingTheModelOfAPipelineWithoutStagesFinishes() {
        let run = observed("ab#") { changes, _ in changes }
        #expect(run == "ab|")
        #expect(run.isSourceAlive == false)
    }

    @Test func deallocatingABoxFinishesItsObservation() {
        let run = Marbles().run("ab#--") { clock, out in
            let box = ObservableValue("0")
            let token = box.receptionist().map { $0.newValue }.debounce(for: .milliseconds(10), scheduler: clock)
                .deliver(on: .immediate, out)
            return .observation(of: box, token: token) { $0.value = $1 }
        }
        #expect(run == "--(b|)")
        #expect(run.isSourceAlive == false)
    }

    /// A stage that holds changes holds their `object` (the model), as `Pipeline` documents: the
    /// model is deallocated, and the observation finishes, only once the stage hands the changes
    /// on by itself (a flush, a timer), never losing them.
    @Test func aModelWhoseChangesAStageHoldsGoesWhenTheStageHandsThemOn() {
        let countOnly = observed("ab#--!") { changes, _ in changes.batch(count: 10) }
        #expect(countOnly == "-----([ab]|)", "kept alive by its partial batch until the flush")
        #expect(countOnly.isSourceAlive == false)

        let batched = observed("ab#--------------------") { changes, clock in
            changes.batch(count: 10, every: .milliseconds(20), scheduler: clock)
        }
        #expect(batched == "--------------------([ab]|)", "kept alive until the batch's timer")
        #expect(batched.isSourceAlive == false)

        let debounced = observed("ab#--------------------") { changes, clock in
            changes.debounce(for: .milliseconds(20), scheduler: clock)
        }
        #expect(debounced == "---------------------(b|)", "kept alive until the debounce is due")
        #expect(debounced.isSourceAlive == false)
    }

    // MARK: - Re-entrant calls from the task block

    @Test func cancelFromInsideTheTaskBlock() {
        let receptionist = BackReference<Receptionist<String>>()
        let run = Marbles().run("abcdef-----") { clock, out in
            .receptionist(
                receptionist.set(
                    Receptionist.pipeline(of: String.self)
                        .batch(count: 2, every: .milliseconds(5), scheduler: clock)
                        .deliver(on: .immediate) { (batch: [String]) in
                            out(batch)
                            if batch == ["c", "d"] { receptionist.value?.cancel() }
                        }
                )
            )
        }
        #expect(run == "-[ab]-([cd]^)")
        #expect(run.pendingTimers == 0)
        #expect(run.statistics.delivered == 2)
    }

    @Test func flushAndSendFromInsideTheTaskBlock() {
        let receptionist = BackReference<Receptionist<String>>()
        let run = Marbles().run("abc-----------") { clock, out in
            .receptionist(
                receptionist.set(
                    Receptionist.pipeline(of: String.self)
                        .batch(count: 3, every: .milliseconds(10), scheduler: clock)
                        .deliver(on: .immediate) { (batch: [String]) in
                            out(batch)
                            if batch == ["a", "b", "c"] {
                                receptionist.value?.send("x")
                                receptionist.value?.flush()
                            }
                        }
                )
            )
        }
        // x enters after the current event, the flush after x: [x] follows at the same tick.
        #expect(run == "--([abc][x])")
        #expect(run.pendingTimers == 0)
    }

    @Test func aSendFromInsideTheTaskBlockIsDeliveredAfterItReturns() {
        let receptionist = BackReference<Receptionist<String>>()
        let events = Recorder<String>()
        let run = Marbles().run("a-c") { _, out in
            .receptionist(
                receptionist.set(
                    Receptionist.pipeline(of: String.self)
                        .map { $0 }
                        .deliver(on: .immediate) { (value: String) in
                            events.append("start " + value)
                            out(value)
                            if value == "a" { receptionist.value?.send("b") }
                            events.append("end " + value)
                        }
                )
            )
        }
        #expect(run == "(ab)-c")
        #expect(events.values == ["start a", "end a", "start b", "end b", "start c", "end c"])
    }

    @Test func finishFromInsideTheTaskBlock() {
        let receptionist = BackReference<Receptionist<String>>()
        let run = Marbles().run("abc-------------") { clock, out in
            .receptionist(
                receptionist.set(
                    Receptionist.pipeline(of: String.self)
                        .throttle(for: .milliseconds(10), scheduler: clock, latest: true)
                        .deliver(on: .immediate) { (value: String) in
                            out(value)
                            receptionist.value?.finish()
                        }
                )
            )
        }
        #expect(run == "(a|)")
        #expect(run.isFinished)
        #expect(run.pendingTimers == 0)
    }

    @Test func cancelFromInsideTheTaskBlockOfAnObservation() {
        let token = BackReference<ObservationToken>()
        let run = Marbles().run("abcdef") { clock, out in
            let model = TimelineModel()
            let observation = model.receptionist(for: \.text)
                .map { $0.newValue }
                .throttle(for: .milliseconds(2), scheduler: clock, latest: true)
                .deliver(on: .immediate) { (value: String) in
                    out(value)
                    if value == "d" { token.value?.cancel() }
                }
            return .observation(of: model, token: token.set(observation)) { $0.text = $1 }
        }
        // Throttled a 0, b 2, d 4 (c replaced by d); e and f come after the cancel.
        #expect(run == "a-b-(d^)")
        #expect(run.pendingTimers == 0)
    }

    @Test func stageClosuresMayCallBackIntoTheirReceptionist() {
        let receptionist = BackReference<Receptionist<String>>()
        let run = Marbles().run("ab-cd") { _, out in
            .receptionist(
                receptionist.set(
                    Receptionist.pipeline(of: String.self)
                        .map { value -> String in
                            if value == "a" { receptionist.value?.send("z") }
                            if value == "d" { receptionist.value?.cancel() }
                            return value
                        }
                        .deliver(on: .immediate, out)
                )
            )
        }
        // z enters after a; cancel inside the stage stops d from being delivered.
        #expect(run == "(az)b-c^")
    }

    /// `Receptionist.isCancelled`: "Whether cancel() stopped the receptionist (a cancel after it
    /// finished has no effect)". Here finish() was called but outputs still wait for the target,
    /// so the receptionist has not finished; cancel() stops it (the outputs are discarded), and
    /// says so, although the intake had already finished.
    @Test func cancelAfterFinishButBeforeEverythingWasDeliveredIsACancel() {
        let target = ManualTarget()
        let recorder = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self).batch(count: 2)
            .deliver(on: target) { recorder.append($0) }
        for value in 1...3 { receptionist.send(value) }
        receptionist.finish()
        #expect(!receptionist.isFinished)
        receptionist.cancel()
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(receptionist.statistics.discarded == 2)
        #expect(!receptionist.isFinished)
        #expect(receptionist.isCancelled)
    }

    // MARK: - Releasing the receptionist or the token

    @Test func releasingTheReceptionistCancelsTimersAndReleasesTheTaskBlock() {
        let clock = ManualScheduler()
        let counter = LifetimeCounter()
        let recorder = Recorder<[String]>()
        var receptionist: Receptionist<String>? = {
            let witness = LifetimeWitness(counter)
            return Receptionist.pipeline(of: String.self)
                .batch(count: 10, every: .milliseconds(5), scheduler: clock)
                .deliver(on: .immediate) { batch in
                    witness.touch()
                    recorder.append(batch)
                }
        }()
        receptionist?.send("a")
        #expect(clock.pendingCount == 1)
        weak let released = receptionist
        receptionist = nil
        #expect(released == nil)
        #expect(clock.pendingCount == 0)
        #expect(counter.deinitialized == 1)
        clock.advance(by: .milliseconds(10))
        #expect(recorder.values.isEmpty)
    }

    @Test func releasingTheTokenCancelsTimersAndDetachesFromTheModel() {
        let clock = ManualScheduler()
        let box = ObservableValue("a")
        let recorder = Recorder<String>()
        var token: ObservationToken? = box.receptionist()
            .map { $0.newValue }
            .throttle(for: .milliseconds(10), scheduler: clock, latest: true)
            .deliver(on: .immediate) { recorder.append($0) }
        box.value = "b"
        box.value = "c"
        #expect(recorder.values == ["b"])
        #expect(clock.pendingCount == 1)
        #expect(box.observerCount == 1)
        _ = token
        token = nil
        #expect(clock.pendingCount == 0)
        #expect(box.observerCount == 0)
        clock.advance(by: .milliseconds(20))
        box.value = "d"
        #expect(recorder.values == ["b"])
    }

    // MARK: - Statistics

    @Test func statisticsCountTheLastStagesOutputs() {
        let run = piped("a1b2c3|") { pipeline, _ in
            pipeline.filter { Int($0) == nil }.batch(count: 2)
        }
        #expect(run == "--[ab]---([c]|)")
        let statistics = run.statistics
        #expect(statistics.received == 2)
        #expect(statistics.delivered == 2)
        #expect(statistics.discarded == 0)
        #expect(statistics.pending == 0)
    }

    /// As `Receptionist.statistics` documents for stages, a token's statistics count the last
    /// stage's outputs: changes a stage held when it was cancelled are in no counter.
    @Test func changesHeldByAStageAtCancelAreNotCountedAsDiscarded() {
        let run = observed("ab^") { changes, _ in changes.map { $0.newValue }.batch(count: 10) }
        #expect(run == "--^")
        // Each change waited in front of the stages on its own (the writes put them there).
        // (The counters only: the timing is the real clock's.)
        #expect(run.statistics.with(timing: .init()) == ReceptionistStatistics(maxPendingBeforeStages: 1))
    }

    @Test func statisticsOfATokenCountWhatWaitsForASlowTarget() {
        let clock = ManualScheduler()
        let target = ManualTarget()
        let box = ObservableValue("a")
        let recorder = Recorder<[String]>()
        let token = box.receptionist()
            .map { $0.newValue }
            .batch(count: 2, every: .milliseconds(5), scheduler: clock)
            .deliver(on: target) { recorder.append($0) }
        for value in ["b", "c", "d", "e", "f"] { box.value = value }
        clock.advance(by: .milliseconds(5))
        var statistics = token.statistics
        #expect(statistics.received == 3)
        #expect(statistics.pending == 3)
        #expect(statistics.delivered == 0)
        target.runAll()
        statistics = token.statistics
        #expect(statistics.delivered == 3)
        #expect(statistics.pending == 0)
        #expect(recorder.values == [["b", "c"], ["d", "e"], ["f"]])
    }
}
