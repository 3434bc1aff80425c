import Testing

@testable import Receptionist

/// The instant `milliseconds` after the origin.
private func ms(_ milliseconds: Int) -> SchedulerInstant {
    .zero + .milliseconds(milliseconds)
}

/// The batching decisions, event by event, without threads or a scheduler. `finish(at:)` is `flush(at:)`,
/// so the flush cases are the finish cases too.
@Suite struct BatchStateMachineTests {
    typealias Machine = BatchStateMachine<Int>
    typealias Action = Machine.Action

    // MARK: Count only

    @Test func countOnlyClosesEachBatchAtItsCountAndNeverUsesTheTimer() {
        var machine = Machine(count: 3, interval: nil)
        #expect(machine.received(1, at: ms(0)) == Action())
        #expect(machine.received(2, at: ms(5_000)) == Action(), "no interval: time never closes a batch")
        #expect(machine.pendingCount == 2)
        #expect(machine.received(3, at: ms(9_000)) == Action(outputs: [[1, 2, 3]]))
        #expect(machine.pendingCount == 0)
        #expect(machine.received(4, at: ms(9_000)) == Action())
        #expect(machine.flush(at: .zero) == Action(outputs: [[4]]), "nothing armed: nothing to disarm")
        #expect(machine.flush(at: .zero) == Action())
    }

    @Test func countOfOneHandsOnEveryElementAlone() {
        var machine = Machine(count: 1, interval: nil)
        #expect(machine.received(1, at: ms(0)) == Action(outputs: [[1]]))
        #expect(machine.received(2, at: ms(0)) == Action(outputs: [[2]]))
        #expect(machine.pendingCount == 0)
        #expect(machine.flush(at: .zero) == Action())
    }

    @Test func countOfOneWithAnIntervalNeverArmsTheTimer() {
        var machine = Machine(count: 1, interval: .milliseconds(10))
        #expect(machine.received(1, at: ms(0)) == Action(outputs: [[1]]))
        #expect(machine.received(2, at: ms(3)) == Action(outputs: [[2]]))
        #expect(machine.received(3, at: ms(30)) == Action(outputs: [[3]]))
        #expect(machine.timerFired(generation: machine.generation, at: ms(40)) == Action())
        #expect(machine.flush(at: .zero) == Action())
    }

    // MARK: Time only

    @Test func timeOnlyArmsOnceAtTheFirstElementAndClosesWhenTheTimerFires() {
        var machine = Machine(count: nil, interval: .milliseconds(10))
        #expect(machine.received(1, at: ms(0)) == Action(timer: .arm(at: ms(10), generation: 1)))
        #expect(machine.received(2, at: ms(3)) == Action(), "the window runs from the first element")
        #expect(machine.received(3, at: ms(9)) == Action())
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(outputs: [[1, 2, 3]]))
        #expect(machine.pendingCount == 0)
        #expect(machine.received(4, at: ms(17)) == Action(timer: .arm(at: ms(27), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(27)) == Action(outputs: [[4]]))
    }

    @Test func aSecondFireOfTheSameGenerationFindsNothingToHandOn() {
        var machine = Machine(count: nil, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(outputs: [[1]]))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action())
    }

    @Test func manyElementsAtOneInstantStayInOneBatch() {
        var machine = Machine(count: nil, interval: .milliseconds(10))
        #expect(machine.received(1, at: ms(5)) == Action(timer: .arm(at: ms(15), generation: 1)))
        for value in 2...100 { #expect(machine.received(value, at: ms(5)) == Action()) }
        #expect(machine.timerFired(generation: 1, at: ms(15)) == Action(outputs: [Array(1...100)]))
    }

    // MARK: Count or time

    @Test func countOrTimeFollowsTheDocumentedTimeline() {
        // batch(count: 3, every: .milliseconds(10)): a b c at 0 1 2, d at 3, e f at 20 22.
        var machine = BatchStateMachine<String>(count: 3, interval: .milliseconds(10))
        typealias Action = BatchStateMachine<String>.Action
        #expect(machine.received("a", at: ms(0)) == Action(timer: .arm(at: ms(10), generation: 1)))
        #expect(machine.received("b", at: ms(1)) == Action())
        #expect(machine.received("c", at: ms(2)) == Action(outputs: [["a", "b", "c"]], timer: .disarm))
        #expect(machine.received("d", at: ms(3)) == Action(timer: .arm(at: ms(13), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(13)) == Action(outputs: [["d"]]))
        #expect(machine.received("e", at: ms(20)) == Action(timer: .arm(at: ms(30), generation: 3)))
        #expect(machine.received("f", at: ms(22)) == Action())
        #expect(machine.timerFired(generation: 3, at: ms(30)) == Action(outputs: [["e", "f"]]))
    }

    @Test func aBatchClosedByCountDisarmsAndItsTimerIsThenIgnored() {
        var machine = Machine(count: 2, interval: .milliseconds(10))
        #expect(machine.received(1, at: ms(0)) == Action(timer: .arm(at: ms(10), generation: 1)))
        #expect(machine.received(2, at: ms(1)) == Action(outputs: [[1, 2]], timer: .disarm))
        // The fire was already on its way when the timer was disarmed.
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action())
        #expect(machine.received(3, at: ms(11)) == Action(timer: .arm(at: ms(21), generation: 2)))
        #expect(machine.timerFired(generation: 2, at: ms(21)) == Action(outputs: [[3]]))
    }

    @Test func aStaleFireDoesNotCloseTheNextOpenBatch() {
        var machine = Machine(count: 2, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        #expect(machine.received(2, at: ms(1)) == Action(outputs: [[1, 2]], timer: .disarm))
        #expect(machine.received(3, at: ms(5)) == Action(timer: .arm(at: ms(15), generation: 2)))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "generation 1 belongs to [1, 2]")
        #expect(machine.pendingCount == 1)
        #expect(machine.received(4, at: ms(12)) == Action(outputs: [[3, 4]], timer: .disarm))
    }

    @Test func aBatchCanCloseByTimeAndTheNextByCount() {
        var machine = Machine(count: 3, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(4))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(outputs: [[1, 2]]))
        #expect(machine.received(3, at: ms(10)) == Action(timer: .arm(at: ms(20), generation: 2)))
        #expect(machine.received(4, at: ms(11)) == Action())
        #expect(machine.received(5, at: ms(12)) == Action(outputs: [[3, 4, 5]], timer: .disarm))
        #expect(machine.timerFired(generation: 2, at: ms(20)) == Action())
        #expect(machine.flush(at: .zero) == Action())
    }

    // MARK: The window's end

    @Test func anElementExactlyAtTheDeadlineStartsTheNextBatch() {
        var machine = Machine(count: 5, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(9))
        // The timer for t+10 has not fired yet: the window is [0, 10), so 3 is not in it.
        #expect(machine.received(3, at: ms(10)) == Action(outputs: [[1, 2]], timer: .arm(at: ms(20), generation: 2)))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "the late fire of the closed batch")
        #expect(machine.pendingCount == 1)
        #expect(machine.timerFired(generation: 2, at: ms(20)) == Action(outputs: [[3]]))
    }

    @Test func anElementAfterAMissedDeadlineClosesTheLateBatchFirst() {
        var machine = Machine(count: nil, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(4))
        // The timer is late (its scheduler was busy): the element handles the deadline.
        #expect(machine.received(3, at: ms(25)) == Action(outputs: [[1, 2]], timer: .arm(at: ms(35), generation: 2)))
        #expect(machine.timerFired(generation: 1, at: ms(26)) == Action())
        #expect(machine.received(4, at: ms(34)) == Action())
        #expect(machine.timerFired(generation: 2, at: ms(35)) == Action(outputs: [[3, 4]]))
    }

    @Test func aLateElementCanStartABatchThatItsSuccessorFills() {
        var machine = Machine(count: 2, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        #expect(machine.received(2, at: ms(12)) == Action(outputs: [[1]], timer: .arm(at: ms(22), generation: 2)))
        #expect(machine.received(3, at: ms(13)) == Action(outputs: [[2, 3]], timer: .disarm))
        #expect(machine.timerFired(generation: 1, at: ms(13)) == Action())
        #expect(machine.timerFired(generation: 2, at: ms(22)) == Action())
    }

    // MARK: Flush (and finish)

    @Test func flushOnAnEmptyMachineHandsOnNothing() {
        var machine = Machine(count: 3, interval: .milliseconds(10))
        #expect(machine.flush(at: .zero) == Action())
        #expect(machine.timerFired(generation: 0, at: ms(10)) == Action())
        #expect(machine.received(1, at: ms(10)) == Action(timer: .arm(at: ms(20), generation: 1)))
    }

    @Test func flushHandsOnThePartialBatchAndDisarms() {
        var machine = Machine(count: 3, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        _ = machine.received(2, at: ms(1))
        #expect(machine.flush(at: .zero) == Action(outputs: [[1, 2]], timer: .disarm))
        #expect(machine.flush(at: .zero) == Action(), "a second flush finds an empty batch")
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "the timer after a flush")
        // The next batch's window runs from its own first element, not from the flushed one's.
        #expect(machine.received(3, at: ms(8)) == Action(timer: .arm(at: ms(18), generation: 2)))
        #expect(machine.received(4, at: ms(12)) == Action())
        #expect(machine.timerFired(generation: 2, at: ms(18)) == Action(outputs: [[3, 4]]))
    }

    @Test func flushAfterTheTimerClosedTheBatchHandsOnNothing() {
        var machine = Machine(count: nil, interval: .milliseconds(10))
        _ = machine.received(1, at: ms(0))
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(outputs: [[1]]))
        #expect(machine.flush(at: .zero) == Action())
    }

    // MARK: Order

    @Test func elementsKeepTheirOrderInsideAndAcrossBatches() {
        var machine = Machine(count: 4, interval: .milliseconds(10))
        var batches: [[Int]] = []
        for value in 0..<10 { batches += machine.received(value, at: ms(value / 3)).outputs }
        batches += machine.flush(at: .zero).outputs
        #expect(batches == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]])

        var next: [[Int]] = []
        for (offset, value) in [5, 3, 9, 1].enumerated() {
            next += machine.received(value, at: ms(20 + offset)).outputs
        }
        #expect(next == [[5, 3, 9, 1]], "arrival order, not value order")
    }

    /// Random arrivals (with ties between an element and a due timer in both orders, and fires
    /// that arrive after their timer was replaced or disarmed), checked against the rules.
    @Test(arguments: [1, 2, 3, 7] as [Int])
    func randomTimelinesKeepTheRules(count: Int) {
        let interval = Duration.milliseconds(10)
        var random = SplitMix64(seed: UInt64(count) &* 7_919)
        for _ in 0..<200 {
            var machine = Machine(count: count, interval: interval)
            var timer: (deadline: SchedulerInstant, generation: Int)?
            var arrivals: [SchedulerInstant] = []
            var closed: [(batch: [Int], at: SchedulerInstant)] = []
            func perform(_ action: Action, at now: SchedulerInstant) {
                closed += action.outputs.map { ($0, now) }
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
            var now = SchedulerInstant.zero
            for value in 0..<40 {
                now = now + .milliseconds(Int.random(in: 0...6, using: &random))
                arrivals.append(now)
                if Bool.random(using: &random) {
                    fireTimers(through: now)
                    perform(machine.received(value, at: now), at: now)
                } else {
                    // The element comes first; a timer due now fires after it, even if replaced.
                    fireTimers(through: now - .nanoseconds(1))
                    let due = timer.flatMap { $0.deadline == now ? $0 : nil }
                    perform(machine.received(value, at: now), at: now)
                    if let due {
                        if timer?.generation == due.generation { timer = nil }
                        perform(machine.timerFired(generation: due.generation, at: now), at: now)
                    }
                }
            }
            fireTimers(through: now + interval)
            #expect(machine.flush(at: .zero) == Action(), "every batch closed by time")

            #expect(closed.flatMap(\.batch) == Array(0..<40), "in order, none lost, none repeated")
            for (batch, at) in closed {
                let first = arrivals[batch[0]]
                #expect(!batch.isEmpty && batch.count <= count)
                #expect(batch.allSatisfy { arrivals[$0] < first + interval }, "inside [first, first + interval)")
                if batch.count < count {
                    #expect(at == first + interval, "a partial batch closes exactly at its deadline")
                } else {
                    #expect(at == arrivals[batch.last!], "a full batch closes with its last element")
                }
            }
        }
    }
}
