import Dispatch
import Testing

@testable import Receptionist

/// A time-based stage on a `QueueScheduler` keeps one timer submitted and moves it lazily
/// (`StageTimer`): fewer timers for the scheduler, the same outputs at the same times. The outputs
/// of both ways are compared on every stage by `RandomizedStageTests` (every other sequence runs
/// lazily); these tests check the timers themselves.
@Suite struct LazyTimerTests {
    /// `batch(count: 2, every: 10 ms)` fed 11 elements at once: five batches close by count and
    /// one stays open. Eagerly, every batch arms and cancels a timer; lazily, the first timer
    /// stays submitted and the open batch's deadline waits behind it.
    @Test(arguments: [false, true])
    func batchesClosedByCountLeaveOneTimerSubmitted(lazily: Bool) {
        let clock = ManualScheduler(rearmingStageTimersLazily: lazily)
        let out = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 2, every: .milliseconds(10), scheduler: clock)
            .deliver(on: .immediate) { out.append($0) }
        for value in 0..<4 { receptionist.send(value) }
        // Two batches closed by count, none open: eagerly no timer is left; lazily the first one.
        #expect(clock.pendingCount == (lazily ? 1 : 0))
        clock.advance(by: .milliseconds(3))
        for value in 4..<11 { receptionist.send(value) }
        // The batch [10] opened at 3 ms wants 13 ms; lazily, the timer for 10 ms is still the one
        // submitted, and it will move on when it fires.
        #expect(clock.pendingCount == 1)
        #expect(clock.nextDeadline == .zero + .milliseconds(lazily ? 10 : 13))
        clock.advance(by: .milliseconds(7))  // 10 ms: lazily, the timer fires and moves to 13 ms
        #expect(out.values.count == 5)
        #expect(clock.pendingCount == 1)
        #expect(clock.nextDeadline == .zero + .milliseconds(13))
        clock.advance(by: .milliseconds(2))  // 12 ms
        #expect(out.values.count == 5, "the open batch closes at 13 ms, not before")
        clock.advance(by: .milliseconds(1))  // 13 ms
        #expect(out.values == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]])
        #expect(clock.pendingCount == 0)
    }

    /// The timer itself, driven as a stage's machine would: arming later only notes the
    /// deadline, arming earlier replaces the submitted timer, disarming forgets the wish, and a
    /// fire reaches the machine only once its wanted deadline has come.
    @Test func aTimerMovesLazilyAndFiresOnlyAtTheWantedDeadline() {
        let clock = ManualScheduler(rearmingStageTimersLazily: true)
        let timers = StageTimers(deliveringTo: ImmediateTarget())
        let fires = Recorder<Int>()
        let node = FiredNode()
        let timer = StageTimer(timers: timers, scheduler: clock)
        // What a pipeline's intake does with a fire: asks the timer which generation it is.
        timers.connect { fire in
            if let generation = timer.fired(fire.id, for: node) { fires.append(generation) }
        }
        timer.perform(.arm(at: .zero + .milliseconds(20), generation: 1), for: node)
        timer.perform(.arm(at: .zero + .milliseconds(30), generation: 2), for: node)  // later: noted
        #expect(clock.pendingCount == 1)
        #expect(clock.nextDeadline == .zero + .milliseconds(20))
        timer.perform(.arm(at: .zero + .milliseconds(10), generation: 3), for: node)  // earlier: replaces
        #expect(clock.pendingCount == 1)
        #expect(clock.nextDeadline == .zero + .milliseconds(10))
        timer.perform(.arm(at: .zero + .milliseconds(25), generation: 4), for: node)  // later: noted
        clock.advance(to: .zero + .milliseconds(10))
        #expect(fires.values.isEmpty, "the wanted deadline is 25 ms")
        #expect(clock.nextDeadline == .zero + .milliseconds(25))
        clock.advance(to: .zero + .milliseconds(25))
        #expect(fires.values == [4])
        timer.perform(.arm(at: .zero + .milliseconds(40), generation: 5), for: node)
        timer.perform(.disarm, for: node)
        clock.advance(to: .zero + .milliseconds(50))
        #expect(fires.values == [4], "a disarmed timer's fire reaches nobody")
        #expect(clock.pendingCount == 0)
        timers.cancelAll()
    }

    /// On a real queue: many batches close by count while one timer waits for its deadline; the
    /// last, partial batch is still handed on by time. Bounded waits, generous margins.
    @Test func aPartialBatchIsHandedOnByTimeAfterManyCountClosedOnesOnAQueue() {
        let out = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 4, every: .milliseconds(30), scheduler: .on(DispatchQueue(label: "lazy.timers")))
            .deliver(on: DispatchQueue(label: "lazy.consumer")) { out.append($0) }
        for value in 0..<4_001 { receptionist.send(value) }
        // Whatever the timing (a sender held up for 30 ms closes a batch early, by time), the
        // last element comes without a flush: by time.
        #expect(waitUntil { out.values.reduce(0) { $0 + $1.count } == 4_001 }, "the last batch comes by time")
        #expect(out.values.flatMap { $0 } == Array(0..<4_001))
        #expect(out.values.allSatisfy { (1...4).contains($0.count) })
        receptionist.cancel()
    }
}

/// A node that only receives fires (for `StageTimer` alone).
private final class FiredNode: TimedStageNode {
    func timerFired(_ id: Int) {}
}
