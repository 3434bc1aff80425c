import Testing

@testable import Receptionist

/// On a `QueueScheduler` (and here a manual clock that asks for the same), `batch` (by count and
/// time, and by content) and `throttle` read their scheduler's clock only for the elements that
/// need it: one that opens a batch or window, or finds its deadline passed.
/// Every other element is handled with `StageTimer.reached`, the latest deadline at which one of
/// the stage's timers ran on the scheduler, which the machine promises to treat as it would the
/// time itself (`TimedStateMachine.needsTime(after:)`).
@Suite struct StageClockReadTests {
    // MARK: The machines' promise

    /// Two machines fed the same events in lockstep: one always with the time, the other, as a
    /// stage feeds it, with `reached` (the deadlines its timers reached on time) whenever it says
    /// it needs no more. Every fire reaches them late by a random delay (the intake busy with
    /// elements), so elements also come after a deadline and before its fire. Every action must
    /// be the same, and most elements must need no clock.
    @Test(arguments: 0..<8)
    func aMachineFedWhatItsTimersReachedActsAsOneFedTheTime(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed) &* 7919 &+ 1)
        let interval = Duration.milliseconds(10)
        check(BatchStateMachine<Int>(count: 3, interval: interval), interval, &random, closesByCount: true)
        check(BatchStateMachine<Int>(count: nil, interval: interval), interval, &random)
        check(BatchStateMachine<Int>(count: 4, interval: nil), interval, &random, closesByCount: true)
        for (leading, trailing) in [
            (true, ThrottleStateMachine<Int>.Trailing.latest), (true, .first), (true, .none), (false, .latest),
            (false, .first),
        ] {
            check(
                ThrottleStateMachine<Int>(interval: interval, leading: leading, trailing: trailing), interval, &random)
        }
    }

    private func check<Machine: TimedStateMachine>(
        _ initial: Machine, _ interval: Duration, _ random: inout SplitMix64, closesByCount: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) where Machine.Input == Int, Machine.Output: Equatable {
        #expect(Machine.readsTimeOnlyWhenNeeded, sourceLocation: sourceLocation)
        var timed = initial
        var lazy = initial
        // The timer the machines want, and the fires the scheduler has started, waiting to reach
        // the machines (at their deadline plus a delay).
        var armed: (deadline: SchedulerInstant, generation: Int)?
        var firing: [(at: SchedulerInstant, generation: Int)] = []
        var reached = SchedulerInstant(offset: .nanoseconds(Int.min))
        var time = SchedulerInstant.zero
        var timeReads = 0
        var outputs = 0
        let elements = 400

        func apply(_ timer: TimerAction) {
            switch timer {
            case .none: return
            case .arm(let deadline, let generation): armed = (deadline, generation)
            case .disarm: armed = nil
            }
        }
        for element in 0..<elements {
            time = time + .microseconds(Int64.random(in: 0...4_000, using: &random))
            // The scheduler starts the timer at its deadline; its fire reaches the stage later.
            if let due = armed, due.deadline <= time {
                reached = max(reached, due.deadline)
                let delay = Duration.microseconds(Int64.random(in: 0...12_000, using: &random))
                firing.append((due.deadline + delay, due.generation))
                armed = nil
            }
            while let fire = firing.first, fire.at <= time {
                firing.removeFirst()
                let expected = timed.timerFired(generation: fire.generation, at: fire.at)
                #expect(
                    lazy.timerFired(generation: fire.generation, at: fire.at) == expected,
                    sourceLocation: sourceLocation)
                outputs += expected.outputs.count
                apply(expected.timer)
            }
            let expected = timed.received(element, at: time)
            let action: TimedStageAction<Int, Machine.Output>
            if lazy.needsTime(after: reached) {
                timeReads += 1
                action = lazy.received(element, at: time)
            } else {
                action = lazy.received(element, at: reached)
            }
            #expect(
                action == expected, "element \(element) at \(time), reached \(reached)", sourceLocation: sourceLocation)
            #expect(lazy.heldCount == timed.heldCount, sourceLocation: sourceLocation)
            outputs += expected.outputs.count
            apply(expected.timer)
        }
        let flushed = timed.flush(at: time)
        #expect(lazy.flush(at: time) == flushed, sourceLocation: sourceLocation)
        outputs += flushed.outputs.count
        // A read opens a batch or window (each ends in an output), or finds one passed.
        #expect(timeReads <= outputs, "\(timeReads) clock reads for \(outputs) outputs", sourceLocation: sourceLocation)
        if !closesByCount {
            // 400 elements 2 ms apart on average span about 80 windows of 10 ms.
            #expect(
                timeReads < elements / 3, "\(timeReads) clock reads for \(elements) elements",
                sourceLocation: sourceLocation)
        }
    }

    // MARK: Stages

    /// A manual scheduler that counts the reads of its clock, and whose stages read it as they
    /// read a `QueueScheduler`'s: only when they need it.
    final class CountingScheduler: DeliveryScheduler, StageTimerPolicy {
        var rearmsStageTimersLazily: Bool { false }
        var readsStageClockLazily: Bool { true }

        let base = ManualScheduler()
        private let readCount = AtomicValue<Int>(0)
        var reads: Int { readCount.load(ordering: .relaxed) }

        var now: SchedulerInstant {
            readCount.add(1, ordering: .relaxed)
            return base.now
        }

        func submit(at deadline: SchedulerInstant, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
            base.submit(at: deadline, work)
        }

        func submit(_ work: @escaping @Sendable () -> Void) {
            base.submit(work)
        }
    }

    @Test func aBatchReadsTheClockOncePerBatchNotPerElement() {
        let clock = CountingScheduler()
        let out = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 1_000, every: .milliseconds(10), scheduler: clock)
            .deliver(on: .immediate) { out.append($0) }
        for value in 0..<500 { receptionist.send(value) }
        #expect(clock.reads == 1, "the first element opened the batch")
        clock.base.advance(by: .milliseconds(10))
        #expect(out.values == [Array(0..<500)])
        #expect(clock.reads == 2, "and the fire closed it")
        for value in 500..<1_500 { receptionist.send(value) }
        #expect(out.values == [Array(0..<500), Array(500..<1_500)], "closed by count")
        #expect(clock.reads == 3)
        receptionist.finish()
    }

    @Test func aThrottleReadsTheClockOncePerWindowNotPerElement() {
        let clock = CountingScheduler()
        let out = Recorder<Int>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .throttle(for: .milliseconds(10), scheduler: clock, latest: true)
            .deliver(on: .immediate) { out.append($0) }
        for value in 0..<500 { receptionist.send(value) }
        #expect(out.values == [0])
        #expect(clock.reads == 1, "the first element opened the window")
        clock.base.advance(by: .milliseconds(10))
        #expect(out.values == [0, 499])
        #expect(clock.reads == 2, "the fire handed on the latest and opened the next window")
        for value in 500..<600 { receptionist.send(value) }
        #expect(clock.reads == 2, "inside the window: no read")
        receptionist.finish()
        #expect(out.values == [0, 499, 599])
    }

    @Test func aBatchByContentReadsTheClockOnlyToOpenABatch() {
        let clock = CountingScheduler()
        let out = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(by: { $0 / 100 }, count: 1_000, every: .milliseconds(10), scheduler: clock)
            .deliver(on: .immediate) { out.append($0) }
        for value in 0..<300 { receptionist.send(value) }
        #expect(out.values == [Array(0..<100), Array(100..<200)])
        #expect(clock.reads == 3, "one per batch the content opened")
        receptionist.finish()
        #expect(out.values == [Array(0..<100), Array(100..<200), Array(200..<300)])
    }

    /// The scheduler ran the timer, but its fire has not reached the stage (the intake is busy):
    /// the next element finds the batch's window passed, hands on the batch and opens the next,
    /// and the fire, when it comes, is stale.
    @Test func anElementAfterATimerRanAndBeforeItsFireStartsTheNextBatch() {
        let clock = CountingScheduler()
        let timers = StageTimers(deliveringTo: ImmediateTarget())
        let fires = Recorder<Int>()
        timers.connect { fires.append($0.id) }  // held back, as a busy intake would
        let out = Recorder<[Int]>()
        let stage = TimedStage(
            machine: BatchStateMachine<Int>(count: 100, interval: .milliseconds(10)),
            timer: StageTimer(timers: timers, scheduler: clock),
            downstream: StageInlet(RecordingNode(out)))
        stage.receive(1)
        stage.receive(2)
        clock.base.advance(by: .milliseconds(10))
        #expect(fires.values.count == 1)
        #expect(out.values.isEmpty, "the fire has not reached the stage")
        stage.receive(3)
        #expect(out.values == [[1, 2]])
        for id in fires.values { stage.timerFired(id) }
        #expect(out.values == [[1, 2]], "the fire of the closed batch is stale")
        stage.flush()
        #expect(out.values == [[1, 2], [3]])
    }

    final class RecordingNode: StageNode {
        let out: Recorder<[Int]>
        init(_ out: Recorder<[Int]>) { self.out = out }
        func receive(_ input: [Int]) { out.append(input) }
        func flush() {}
        func finish() {}
    }

    @Test func nanosecondsAreRoundedDown() {
        #expect(Duration.nanoseconds(5).nanosecondsRoundedDown == 5)
        #expect(Duration.nanoseconds(-5).nanosecondsRoundedDown == -5)
        #expect(
            (Duration.nanoseconds(5) + .init(secondsComponent: 0, attosecondsComponent: 1)).nanosecondsRoundedDown == 5)
        #expect(
            (Duration.nanoseconds(-5) - .init(secondsComponent: 0, attosecondsComponent: 1)).nanosecondsRoundedDown
                == -6)
        #expect(Duration.seconds(Int64.max).nanosecondsRoundedDown == .max)
        #expect(Duration.seconds(Int64.min).nanosecondsRoundedDown == .min)
        #expect((Duration.seconds(Int64.max) + .seconds(Int64.max)).nanosecondsRoundedDown == .max)
        #expect(Duration.seconds(3).nanosecondsRoundedDown == 3_000_000_000)
    }
}
