import Testing

@testable import Receptionist

/// The instant `milliseconds` after the origin.
private func ms(_ milliseconds: Int) -> SchedulerInstant {
    .zero + .milliseconds(milliseconds)
}

/// The throttling decisions, event by event, without threads or a scheduler (interval 10 ms).
@Suite struct ThrottleStateMachineTests {
    typealias Machine = ThrottleStateMachine<Int>
    typealias Action = Machine.Action

    func machine(latest: Bool) -> Machine {
        Machine(interval: .milliseconds(10), latest: latest)
    }

    // MARK: Leading and trailing edges

    @Test(arguments: [true, false])
    func theFirstElementIsHandedOnAtOnceAndOpensAWindow(latest: Bool) {
        var machine = machine(latest: latest)
        #expect(machine.received(1, at: ms(5)) == Action(outputs: [1], timer: .arm(at: ms(15), generation: 1)))
        #expect(!machine.isHolding)
        #expect(machine.received(2, at: ms(6)) == Action())
        #expect(machine.isHolding)
    }

    @Test func withLatestAWindowHandsOnItsLastElement() {
        var machine = machine(latest: true)
        _ = machine.received(1, at: ms(0))
        #expect(machine.received(2, at: ms(2)) == Action())
        #expect(machine.received(3, at: ms(4)) == Action())
        #expect(
            machine.timerFired(generation: 1, at: ms(10))
                == Action(outputs: [3], timer: .arm(at: ms(20), generation: 2))
        )
    }

    @Test func withoutLatestAWindowHandsOnItsFirstElement() {
        var machine = machine(latest: false)
        _ = machine.received(1, at: ms(0))
        #expect(machine.received(2, at: ms(2)) == Action())
        #expect(machine.received(3, at: ms(4)) == Action())
        #expect(
            machine.timerFired(generation: 1, at: ms(10))
                == Action(outputs: [2], timer: .arm(at: ms(20), generation: 2))
        )
    }

    @Test(arguments: [true, false])
    func aTrailingOutputOpensAWindowThatHoldsTheNextElement(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(3))
        #expect(
            machine.timerFired(generation: 1, at: ms(10))
                == Action(outputs: [2], timer: .arm(at: ms(20), generation: 2))
        )
        #expect(machine.received(3, at: ms(15)) == Action(), "not a leading edge: 2 was handed on 5 ms ago")
        #expect(machine.received(4, at: ms(16)) == Action())
        #expect(
            machine.timerFired(generation: 2, at: ms(20))
                == Action(outputs: [latest ? 4 : 3], timer: .arm(at: ms(30), generation: 3))
        )
    }

    @Test(arguments: [true, false])
    func anEmptyWindowMakesTheStageIdle(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(timer: .disarm))
        #expect(!machine.isHolding)
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "idle: a repeated fire does nothing")
        #expect(machine.received(2, at: ms(12)) == Action(outputs: [2], timer: .arm(at: ms(22), generation: 2)))
    }

    @Test func followsTheDocumentedTimeline() {
        // throttle(for: .milliseconds(10), latest: true): a b c at 0 2 4, d e at 35 37.
        var machine = ThrottleStateMachine<String>(interval: .milliseconds(10), latest: true)
        typealias Action = ThrottleStateMachine<String>.Action
        #expect(machine.received("a", at: ms(0)) == Action(outputs: ["a"], timer: .arm(at: ms(10), generation: 1)))
        #expect(machine.received("b", at: ms(2)) == Action())
        #expect(machine.received("c", at: ms(4)) == Action())
        #expect(
            machine.timerFired(generation: 1, at: ms(10))
                == Action(outputs: ["c"], timer: .arm(at: ms(20), generation: 2))
        )
        #expect(machine.timerFired(generation: 2, at: ms(20)) == Action(timer: .disarm))
        #expect(machine.received("d", at: ms(35)) == Action(outputs: ["d"], timer: .arm(at: ms(45), generation: 3)))
        #expect(machine.received("e", at: ms(37)) == Action())
        #expect(
            machine.timerFired(generation: 3, at: ms(45))
                == Action(outputs: ["e"], timer: .arm(at: ms(55), generation: 4))
        )
        #expect(machine.timerFired(generation: 4, at: ms(55)) == Action(timer: .disarm))
    }

    // MARK: The window's end

    @Test(arguments: [true, false])
    func anElementExactlyAtTheWindowEndFallsInTheNextWindow(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(5))
        // The timer for t+10 has not fired yet: the window ends first, handing on 2, and 3 is
        // held in the window that output opens.
        #expect(machine.received(3, at: ms(10)) == Action(outputs: [2], timer: .arm(at: ms(20), generation: 2)))
        #expect(machine.isHolding)
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "the fire of the ended window")
        #expect(
            machine.timerFired(generation: 2, at: ms(20))
                == Action(outputs: [3], timer: .arm(at: ms(30), generation: 3))
        )
    }

    @Test(arguments: [true, false])
    func anElementExactlyAtTheEndOfAnEmptyWindowIsALeadingEdge(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        #expect(machine.received(2, at: ms(10)) == Action(outputs: [2], timer: .arm(at: ms(20), generation: 2)))
        #expect(!machine.isHolding)
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action())
        #expect(machine.received(3, at: ms(11)) == Action())
    }

    @Test(arguments: [true, false])
    func aLateTimerIsHandledByTheNextElement(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(3))
        // The window ended at 10 but its timer has not fired by 17: 2 is handed on now and opens
        // a window from now, so outputs stay at least 10 ms apart; 3 waits in that window.
        #expect(machine.received(3, at: ms(17)) == Action(outputs: [2], timer: .arm(at: ms(27), generation: 2)))
        #expect(machine.received(4, at: ms(20)) == Action())
        #expect(machine.timerFired(generation: 1, at: ms(17)) == Action(), "the late fire, now stale")
        #expect(
            machine.timerFired(generation: 2, at: ms(27))
                == Action(outputs: [latest ? 4 : 3], timer: .arm(at: ms(37), generation: 3))
        )
    }

    @Test(arguments: [true, false])
    func aLateTimerAfterAnEmptyWindowLeavesALeadingEdge(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        #expect(machine.received(2, at: ms(25)) == Action(outputs: [2], timer: .arm(at: ms(35), generation: 2)))
        #expect(machine.timerFired(generation: 1, at: ms(26)) == Action())
        #expect(machine.timerFired(generation: 2, at: ms(35)) == Action(timer: .disarm))
    }

    // MARK: Flush

    @Test(arguments: [true, false])
    func flushHandsOnTheHeldElementAndThatOutputOpensAWindow(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(3))
        _ = machine.received(3, at: ms(4))
        #expect(machine.flush(at: ms(5)) == Action(outputs: [latest ? 3 : 2], timer: .arm(at: ms(15), generation: 2)))
        #expect(!machine.isHolding)
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "the replaced window's fire")
        #expect(machine.received(4, at: ms(12)) == Action(), "inside the window the flushed output opened")
        #expect(
            machine.timerFired(generation: 2, at: ms(15))
                == Action(outputs: [4], timer: .arm(at: ms(25), generation: 3))
        )
    }

    @Test(arguments: [true, false])
    func flushWithNothingHeldLeavesTheWindowAndItsTimerAlone(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        #expect(machine.flush(at: ms(5)) == Action())
        #expect(machine.received(2, at: ms(7)) == Action(), "still inside the window of 1")
        #expect(
            machine.timerFired(generation: 1, at: ms(10))
                == Action(outputs: [2], timer: .arm(at: ms(20), generation: 2))
        )
    }

    @Test(arguments: [true, false])
    func flushWhenIdleDoesNothing(latest: Bool) {
        var machine = machine(latest: latest)
        #expect(machine.flush(at: ms(0)) == Action())
        _ = machine.received(1, at: ms(1))
        _ = machine.timerFired(generation: 1, at: ms(11))
        #expect(machine.flush(at: ms(12)) == Action())
        #expect(machine.received(2, at: ms(13)) == Action(outputs: [2], timer: .arm(at: ms(23), generation: 2)))
    }

    // MARK: Finish

    @Test(arguments: [true, false])
    func finishHandsOnTheHeldElementAndDisarms(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(3))
        _ = machine.received(3, at: ms(4))
        #expect(machine.finish(at: .zero) == Action(outputs: [latest ? 3 : 2], timer: .disarm))
        #expect(!machine.isHolding)
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "the fire after finish")
        #expect(machine.finish(at: .zero) == Action())
    }

    @Test(arguments: [true, false])
    func finishInAWindowWithNothingHeldOnlyDisarms(latest: Bool) {
        var machine = machine(latest: latest)
        _ = machine.received(1, at: ms(0))
        #expect(machine.finish(at: .zero) == Action(timer: .disarm))
    }

    @Test(arguments: [true, false])
    func finishWhenIdleDoesNothing(latest: Bool) {
        var machine = machine(latest: latest)
        #expect(machine.finish(at: .zero) == Action())
    }

    // MARK: Random timelines

    /// Random arrivals (with ties between an element and a due timer in both orders, and fires
    /// that arrive after their timer was replaced), fed to a `latest` and a first-keeping machine
    /// alike, checked against the rules.
    @Test func randomTimelinesKeepTheRules() {
        let interval = Duration.milliseconds(10)
        var random = SplitMix64(seed: 0x7417)
        for _ in 0..<200 {
            var arrivals: [SchedulerInstant] = []
            var now = SchedulerInstant.zero
            for _ in 0..<40 {
                now = now + .milliseconds(Int.random(in: 0...(Bool.random(using: &random) ? 4 : 25), using: &random))
                arrivals.append(now)
            }
            let elementFirst = arrivals.map { _ in Bool.random(using: &random) }
            let withLatest = Self.run(latest: true, arrivals, elementFirst: elementFirst, interval: interval)
            let withFirst = Self.run(latest: false, arrivals, elementFirst: elementFirst, interval: interval)
            #expect(withLatest.map(\.at) == withFirst.map(\.at), "which element is held does not move windows")

            for (outputs, latest) in [(withLatest, true), (withFirst, false)] {
                var previous: (value: Int, at: SchedulerInstant)?
                for output in outputs {
                    if let previous {
                        #expect(output.value > previous.value, "in order, none repeated")
                        #expect(output.at >= previous.at + interval, "at least an interval apart")
                    }
                    if output.at != arrivals[output.value] {
                        // A trailing edge: the window began with the previous output.
                        guard let previous else {
                            Issue.record("a trailing output without a window: \(output)")
                            break
                        }
                        let window = arrivals.indices.filter {
                            $0 > previous.value && arrivals[$0] >= previous.at && arrivals[$0] < output.at
                        }
                        #expect(output.value == (latest ? window.last : window.first))
                    }
                    previous = output
                }
                if latest {
                    for (value, arrival) in arrivals.enumerated() {
                        #expect(
                            outputs.contains { $0.value >= value && $0.at <= arrival + interval },
                            "with latest, each state is handed on (or overtaken) within an interval"
                        )
                    }
                }
            }
        }
    }

    /// Feeds `arrivals` to a machine whose timer fires exactly at its deadline; at a tie the
    /// element comes first where `elementFirst` says so (and the fire follows, even if replaced).
    static func run(
        latest: Bool,
        _ arrivals: [SchedulerInstant],
        elementFirst: [Bool],
        interval: Duration
    ) -> [(value: Int, at: SchedulerInstant)] {
        var machine = Machine(interval: interval, latest: latest)
        var timer: (deadline: SchedulerInstant, generation: Int)?
        var outputs: [(value: Int, at: SchedulerInstant)] = []
        func perform(_ action: Action, at now: SchedulerInstant) {
            outputs += action.outputs.map { ($0, now) }
            switch action.timer {
            case .none: break
            case .arm(let deadline, let generation): timer = (deadline, generation)
            case .disarm: timer = nil
            }
        }
        func fireTimers(through now: SchedulerInstant) {
            while let due = timer, due.deadline <= now {
                timer = nil
                perform(machine.timerFired(generation: due.generation, at: due.deadline), at: due.deadline)
            }
        }
        for (value, now) in arrivals.enumerated() {
            if elementFirst[value] {
                fireTimers(through: now - .nanoseconds(1))
                let due = timer.flatMap { $0.deadline == now ? $0 : nil }
                perform(machine.received(value, at: now), at: now)
                if let due {
                    if timer?.generation == due.generation { timer = nil }
                    perform(machine.timerFired(generation: due.generation, at: now), at: now)
                }
            } else {
                fireTimers(through: now)
                perform(machine.received(value, at: now), at: now)
            }
        }
        fireTimers(through: arrivals.last! + interval * 2)
        #expect(!machine.isHolding && timer == nil, "idle once the timers have run out")
        return outputs
    }
}

extension ThrottleStateMachineTests {
    /// A held element replaced by a later one leaves the machine in the action, so the stage
    /// releases it after its lock (its deinit may be user code).
    @Test func aReplacedHeldElementIsCarriedOutOfTheMachine() {
        var latest = Machine(interval: .milliseconds(10), latest: true)
        _ = latest.received(1, at: ms(0))
        #expect(latest.received(2, at: ms(1)).released == nil, "nothing was held yet")
        #expect(latest.received(3, at: ms(2)).released == 2)
        var first = Machine(interval: .milliseconds(10), latest: false)
        _ = first.received(1, at: ms(0))
        _ = first.received(2, at: ms(1))
        #expect(
            first.received(3, at: ms(2)).released == 3,
            "the first is kept; the machine owns the new one, so it carries it out")
        #expect(first.isHolding)
        var leadingOnly = Machine(interval: .milliseconds(10), leading: true, trailing: .none)
        _ = leadingOnly.received(1, at: ms(0))
        #expect(leadingOnly.received(2, at: ms(1)).released == 2, "no trailing edge: dropped, carried out")
        #expect(!leadingOnly.isHolding)
    }
}
