import Testing

@testable import Receptionist

/// The instant `milliseconds` after the origin.
private func ms(_ milliseconds: Int) -> SchedulerInstant {
    .zero + .milliseconds(milliseconds)
}

/// The decisions of `batch(while:)` and `batch(by:)`, event by event, without threads or a
/// scheduler. Keys are strings; the caller (the stage) says whether each element belongs.
@Suite struct ContentBatchStateMachineTests {
    typealias Machine = ContentBatchStateMachine<Int, String>
    typealias Action = Machine.Action

    // MARK: Content only

    @Test func anElementThatDoesNotBelongHandsOnTheOpenBatchAndOpensTheNext() {
        var machine = Machine(count: nil, interval: nil)
        #expect(machine.received(1, key: "a", belongs: false, at: ms(0)) == Action())
        #expect(machine.openKey == "a")
        #expect(machine.received(2, key: "a", belongs: true, at: ms(5)) == Action())
        #expect(
            machine.received(3, key: "a", belongs: true, at: ms(9_000)) == Action(), "no interval: time closes nothing")
        #expect(machine.received(4, key: "b", belongs: false, at: ms(9_001)) == Action(outputs: [[1, 2, 3]]))
        #expect(machine.openKey == "b")
        #expect(machine.batching.pendingCount == 1)
        #expect(machine.received(5, key: "c", belongs: false, at: ms(9_002)) == Action(outputs: [[4]]))
        #expect(machine.flush(at: .zero) == Action(outputs: [[5]]))
        #expect(machine.openKey == nil)
    }

    @Test func withNoBatchOpenAnElementOpensOneWhateverBelongsSays() {
        var machine = Machine(count: nil, interval: nil)
        #expect(machine.received(1, key: "a", belongs: true, at: ms(0)) == Action())
        #expect(machine.batching.pendingCount == 1)
        _ = machine.flush(at: .zero)
        #expect(machine.received(2, key: "a", belongs: false, at: ms(1)) == Action(), "no empty batch before it")
        #expect(machine.flush(at: .zero) == Action(outputs: [[2]]))
    }

    @Test func theKeyIsTheLastElementsAndEveryKeyLetGoOfIsReturnedForRelease() {
        var machine = Machine(count: nil, interval: .milliseconds(10))
        #expect(machine.received(1, key: "a", belongs: false, at: ms(0)).released == nil)
        #expect(machine.received(2, key: "a2", belongs: true, at: ms(1)).released == "a")
        #expect(machine.openKey == "a2", "the key of the open batch's last element")
        #expect(machine.received(3, key: "b", belongs: false, at: ms(2)).released == "a2")
        let fired = machine.timerFired(generation: 2, at: ms(12))
        #expect(fired == Action(outputs: [[3]]) && fired.released == "b")
        #expect(machine.openKey == nil)
        _ = machine.received(4, key: "c", belongs: false, at: ms(20))
        #expect(machine.flush(at: ms(21)).released == "c")
        #expect(machine.flush(at: ms(21)).released == nil)
    }

    // MARK: With a count

    @Test func aCountClosesARunAndTheNextElementOpensANewBatch() {
        var machine = Machine(count: 2, interval: nil)
        #expect(machine.received(1, key: "a", belongs: false, at: ms(0)) == Action())
        #expect(machine.received(2, key: "a", belongs: true, at: ms(1)) == Action(outputs: [[1, 2]]))
        #expect(machine.openKey == nil, "a batch closed by count keeps no key")
        #expect(machine.received(3, key: "a", belongs: false, at: ms(2)) == Action())
        #expect(machine.received(4, key: "b", belongs: false, at: ms(3)) == Action(outputs: [[3]]))
        #expect(machine.received(5, key: "b", belongs: true, at: ms(4)) == Action(outputs: [[4, 5]]))
        #expect(machine.flush(at: .zero) == Action())
    }

    @Test func countOfOneHandsOnEveryElementAlone() {
        var machine = Machine(count: 1, interval: .milliseconds(10))
        #expect(machine.received(1, key: "a", belongs: false, at: ms(0)) == Action(outputs: [[1]]))
        #expect(machine.received(2, key: "a", belongs: true, at: ms(1)) == Action(outputs: [[2]]))
        #expect(machine.received(3, key: "b", belongs: false, at: ms(2)) == Action(outputs: [[3]]))
        #expect(machine.openKey == nil)
    }

    // MARK: With an interval

    @Test func aSplitDisarmsTheClosedBatchsTimerAndArmsTheNextOnes() {
        var machine = Machine(count: nil, interval: .milliseconds(10))
        #expect(
            machine.received(1, key: "a", belongs: false, at: ms(0)) == Action(timer: .arm(at: ms(10), generation: 1)))
        #expect(machine.received(2, key: "a", belongs: true, at: ms(2)) == Action())
        #expect(
            machine.received(3, key: "b", belongs: false, at: ms(4))
                == Action(outputs: [[1, 2]], timer: .arm(at: ms(14), generation: 2)),
            "the next batch is timed from its own first element")
        #expect(machine.timerFired(generation: 1, at: ms(10)) == Action(), "the closed batch's fire")
        #expect(machine.timerFired(generation: 2, at: ms(14)) == Action(outputs: [[3]]))
        #expect(machine.openKey == nil)
    }

    @Test func aSplitThatCountClosesAtOnceLeavesTheTimerDisarmed() {
        var machine = Machine(count: 2, interval: .milliseconds(10))
        _ = machine.received(1, key: "a", belongs: false, at: ms(0))
        #expect(
            machine.received(2, key: "b", belongs: false, at: ms(1))
                == Action(outputs: [[1]], timer: .arm(at: ms(11), generation: 2)))
        #expect(machine.received(3, key: "b", belongs: true, at: ms(2)) == Action(outputs: [[2, 3]], timer: .disarm))
        var ones = ContentBatchStateMachine<Int, String>(count: 1, interval: .milliseconds(10))
        #expect(ones.received(1, key: "a", belongs: false, at: ms(0)) == Action(outputs: [[1]]))
    }

    @Test func anElementAfterAMissedDeadlineClosesTheLateBatchWhetherOrNotItBelongs() {
        for belongs in [true, false] {
            var machine = Machine(count: nil, interval: .milliseconds(10))
            _ = machine.received(1, key: "a", belongs: false, at: ms(0))
            #expect(
                machine.received(2, key: "a", belongs: belongs, at: ms(12))
                    == Action(outputs: [[1]], timer: .arm(at: ms(22), generation: 2)))
            #expect(machine.timerFired(generation: 1, at: ms(13)) == Action())
            #expect(machine.openKey == "a")
            #expect(machine.timerFired(generation: 2, at: ms(22)) == Action(outputs: [[2]]))
        }
    }

    @Test func documentedTimeTimeline() {
        // batch(by: isUppercase, every: 3 ms): "ABC-de--F-gh|" → "---[ABC]---[de]--[F]-([gh]|)".
        var machine = ContentBatchStateMachine<String, Bool>(count: nil, interval: .milliseconds(3))
        typealias Action = ContentBatchStateMachine<String, Bool>.Action
        var outputs: [String] = []
        func note(_ action: Action, _ at: Int) { outputs += action.outputs.map { "\($0.joined())@\(at)" } }
        func send(_ value: String, _ at: Int) {
            let key = value.uppercased() == value
            note(machine.received(value, key: key, belongs: machine.openKey == key, at: ms(at)), at)
        }
        send("A", 0)
        send("B", 1)
        send("C", 2)
        note(machine.timerFired(generation: 1, at: ms(3)), 3)
        send("d", 4)
        send("e", 5)
        note(machine.timerFired(generation: 2, at: ms(7)), 7)
        send("F", 8)
        send("g", 10)
        send("h", 11)
        note(machine.finish(at: ms(12)), 12)
        #expect(outputs == ["ABC@3", "de@7", "F@10", "gh@12"])
    }
}
