import Testing

@testable import Receptionist

/// The instant `milliseconds` after the origin.
private func ms(_ milliseconds: Int) -> SchedulerInstant {
    .zero + .milliseconds(milliseconds)
}

/// The debouncing decisions, event by event, without threads or a scheduler (interval 10 ms).
/// `finish(at:)` is `flush(at:)`, so the flush cases are the finish cases too.
@Suite struct DebounceStateMachineTests {
    typealias Machine = DebounceStateMachine<Int>
    typealias Action = Machine.Action

    // MARK: Quiet time

    @Test func aLoneElementIsHandedOnAfterTheInterval() {
        var machine = Machine(interval: .milliseconds(10))
        #expect(machine.received(1, at: ms(5)) == Action(timer: .arm(at: ms(15), generation: 1)))
        #expect(machine.isHolding)
        #expect(machine.timerFired(generation: 1, at: ms(15)) == Action(outputs: [1]))
        #expect(!machine.isHolding)
        #expect(machine.timerFired(generation: 1, at: ms(15)) == Action(), "a repeated fire finds nothing")
    }

    @Test func aBurstArmsOnceAndIsReArmedOncePerEarlyFire() {
        var machine = Machine(interval: .milliseconds(10))
        #expect(machine.received(1, at: ms(0)) == Action(timer: .arm(at: ms(10), generation: 1)))
        #expect(machine.received(2, at: ms(3)) == Action(), "no arm per element")
        #expect(machine.received(3, at: ms(6)) == Action())
        // The fire at 10 is early: 3 is due at 16.
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(timer: .arm(at: ms(16), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(16)) == Action(outputs: [3]))
    }

    @Test func followsTheDocumentedTimeline() {
        // debounce(for: .milliseconds(10)): a b c at 0 3 6, d at 30.
        var machine = DebounceStateMachine<String>(interval: .milliseconds(10))
        typealias Action = DebounceStateMachine<String>.Action
        #expect(machine.received("a", at: ms(0)) == Action(timer: .arm(at: ms(10), generation: 1)))
        #expect(machine.received("b", at: ms(3)) == Action())
        #expect(machine.received("c", at: ms(6)) == Action())
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(timer: .arm(at: ms(16), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(16)) == Action(outputs: ["c"]))
        #expect(machine.received("d", at: ms(30)) == Action(timer: .arm(at: ms(40), generation: 3)))
        #expect(machine.timerFired(generation: 3, at: ms(40)) == Action(outputs: ["d"]))
    }

    @Test func aLongBurstCostsOneArmPerFireNotPerElement() {
        var machine = Machine(interval: .milliseconds(10))
        var arms: [TimerAction] = []
        var outputs: [Int] = []
        var fire = 0
        for now in 0...40 {
            if case .arm(let deadline, let generation)? = arms.last, deadline == ms(now) {
                let action = machine.timerFired(generation: generation, at: ms(now))
                outputs += action.outputs
                if action.timer != .none { arms.append(action.timer) }
                fire += 1
            }
            let action = machine.received(now, at: ms(now))  // an element every millisecond
            outputs += action.outputs
            if action.timer != .none { arms.append(action.timer) }
        }
        #expect(outputs.isEmpty)
        #expect(fire == 4, "fires at 10, 19, 28 and 37, each finding a newer element due 9 ms later")
        #expect(
            arms == [
                .arm(at: ms(10), generation: 1), .arm(at: ms(19), generation: 2),
                .arm(at: ms(28), generation: 3), .arm(at: ms(37), generation: 4),
                .arm(at: ms(46), generation: 5),
            ]
        )
        #expect(machine.timerFired(generation: 5, at: ms(46)) == Action(timer: .arm(at: ms(50), generation: 6)))
        #expect(machine.timerFired(generation: 6, at: ms(50)) == Action(outputs: [40]))
    }

    // MARK: The deadline

    @Test func anElementExactlyAtTheDeadlineComesAfterThePendingOne() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        // The timer for t+10 has not fired yet: 1 is due, so it is handed on before 2 waits.
        #expect(machine.received(2, at: ms(10)) == Action(outputs: [1]), "the armed timer stays")
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(timer: .arm(at: ms(20), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(20)) == Action(outputs: [2]))
    }

    @Test func anElementAtTheDeadlineAfterTheTimerFiredStartsAfresh() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(outputs: [1]))
        #expect(machine.received(2, at: ms(10)) == Action(timer: .arm(at: ms(20), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(20)) == Action(outputs: [2]))
    }

    @Test func anElementJustBeforeTheDeadlineReplacesThePendingOne() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        #expect(machine.received(2, at: ms(10) - .nanoseconds(1)) == Action())
        #expect(
            machine.timerFired(generation: 1, at: ms(10))
                == Action(timer: .arm(at: ms(20) - .nanoseconds(1), generation: 2))
        )
    }

    @Test func aFireAMomentBeforeTheDeadlineArmsForIt() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(5))
        #expect(
            machine.timerFired(generation: 1, at: ms(15) - .nanoseconds(1))
                == Action(timer: .arm(at: ms(15), generation: 2))
        )
        #expect(machine.timerFired(generation: 2, at: ms(15)) == Action(outputs: [2]))
    }

    @Test func aLateTimerIsHandledByTheNextElement() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        // 1 was due at 10; its timer has not fired by 25.
        #expect(machine.received(2, at: ms(25)) == Action(outputs: [1]))
        #expect(machine.received(3, at: ms(27)) == Action())
        // The late fire finds 3 due at 37 and arms for it.
        #expect(machine.timerFired(generation: 1, at: ms(28)) == Action(timer: .arm(at: ms(37), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(37)) == Action(outputs: [3]))
    }

    // MARK: Stale fires

    @Test func aFireOfAReplacedTimerIsIgnored() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(5))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(timer: .arm(at: ms(15), generation: 2)))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "generation 1 was re-armed as 2")
        #expect(machine.isHolding)
        #expect(machine.timerFired(generation: 2, at: ms(15)) == Action(outputs: [2]))
    }

    @Test func aFireAfterAFlushIsIgnoredAndDoesNotHandOnTheNextElementEarly() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        #expect(machine.flush(at: .zero) == Action(outputs: [1], timer: .disarm))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "disarmed, but already on its way")
        #expect(machine.received(2, at: ms(12)) == Action(timer: .arm(at: ms(22), generation: 2)))
        #expect(machine.timerFired(generation: 1, at: ms(12)) == Action())
        #expect(machine.isHolding)
        #expect(machine.timerFired(generation: 2, at: ms(22)) == Action(outputs: [2]))
    }

    // MARK: Flush (and finish)

    @Test func flushHandsOnThePendingElementAtOnceAndDisarms() {
        var machine = Machine(interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(4))
        #expect(machine.flush(at: .zero) == Action(outputs: [2], timer: .disarm))
        #expect(!machine.isHolding)
        #expect(machine.flush(at: .zero) == Action(), "nothing left")
        #expect(machine.received(3, at: ms(6)) == Action(timer: .arm(at: ms(16), generation: 2)), "disarmed: arm again")
        #expect(machine.timerFired(generation: 2, at: ms(16)) == Action(outputs: [3]))
    }

    @Test func flushWithNothingPendingDoesNothing() {
        var machine = Machine(interval: .milliseconds(10))
        #expect(machine.flush(at: .zero) == Action())
        _ = machine.received(1, at: ms(0))
        _ = machine.timerFired(generation: 1, at: ms(10))
        #expect(machine.flush(at: .zero) == Action())
        #expect(machine.received(2, at: ms(11)) == Action(timer: .arm(at: ms(21), generation: 2)))
    }

    // MARK: Random timelines

    /// Random arrivals (with ties between an element and a due timer in both orders, and fires
    /// that arrive after their timer was disarmed), checked against the rule: an element is
    /// handed on, exactly `interval` after it arrived, if and only if no newer element arrived
    /// before then.
    @Test func randomTimelinesKeepTheRule() {
        let interval = Duration.milliseconds(10)
        var random = SplitMix64(seed: 0xDEB0)
        for _ in 0..<200 {
            var machine = Machine(interval: interval)
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
            var arrivals: [SchedulerInstant] = []
            var flushedAt: SchedulerInstant?
            var now = SchedulerInstant.zero
            for value in 0..<40 {
                now = now + .milliseconds(Int.random(in: 0...(Bool.random(using: &random) ? 6 : 14), using: &random))
                arrivals.append(now)
                if Bool.random(using: &random) {
                    fireTimers(through: now)
                    perform(machine.received(value, at: now), at: now)
                } else {
                    // The element comes first; a timer due now fires after it.
                    fireTimers(through: now - .nanoseconds(1))
                    let due = timer.flatMap { $0.deadline == now ? $0 : nil }
                    perform(machine.received(value, at: now), at: now)
                    if let due {
                        if timer?.generation == due.generation { timer = nil }
                        perform(machine.timerFired(generation: due.generation, at: now), at: now)
                    }
                }
                if value == 20, Bool.random(using: &random) {
                    // A flush hands on 20 at once, and a fire already on its way must not count.
                    let flushed = timer
                    perform(machine.flush(at: now), at: now)
                    #expect(outputs.last?.value == 20 && timer == nil)
                    if let flushed, Bool.random(using: &random) {
                        perform(machine.timerFired(generation: flushed.generation, at: now), at: now)
                    }
                    flushedAt = now
                }
            }
            fireTimers(through: now + interval)
            #expect(!machine.isHolding && timer == nil)

            let expected = arrivals.indices.filter {
                $0 == 39 || ($0 == 20 && flushedAt != nil) || arrivals[$0 + 1] >= arrivals[$0] + interval
            }
            #expect(outputs.map(\.value) == expected)
            for output in outputs {
                let due = output.value == 20 ? flushedAt ?? arrivals[20] + interval : arrivals[output.value] + interval
                #expect(output.at == due)
            }
        }
    }
}

extension DebounceStateMachineTests {
    /// A pending element replaced by a newer one leaves the machine in the action, so the stage
    /// releases it after its lock (its deinit may be user code).
    @Test func aReplacedPendingElementIsCarriedOutOfTheMachine() {
        var machine = Machine(interval: .milliseconds(10))
        #expect(machine.received(1, at: ms(0)).released == nil)
        #expect(machine.received(2, at: ms(3)).released == 1)
        let due = machine.received(3, at: ms(20))
        #expect(due.outputs == [2], "a due element is handed on, not replaced")
        #expect(due.released == nil)
    }
}
