import Testing

@testable import Receptionist

/// `batch(while:)` and `batch(by:)`, alone and with a count and an interval, as timelines
/// (tick = 1 ms). The documented timelines are the Stages article's.
@Suite struct ContentBatchStageTests {
    typealias Stages = (Pipeline<ReceptionistInput<String>, String>, ManualScheduler) -> Pipeline<
        ReceptionistInput<String>, [String]
    >

    private func run(_ input: String, marbles: Marbles = Marbles(), _ stages: @escaping Stages) -> MarbleRun {
        marbles.run(input) { clock, out in
            .receptionist(stages(Receptionist.pipeline(of: String.self), clock).deliver(on: .immediate, out))
        }
    }

    @Sendable private static func isUppercase(_ value: String) -> Bool { value.uppercased() == value }

    // MARK: The documented timelines

    @Test func documentedTimelines() {
        let input = "ABC-de--F-gh|"
        #expect(run(input) { p, _ in p.batch(by: Self.isUppercase) } == "----[ABC]---[de]-[F]-([gh]|)")
        #expect(run(input) { p, _ in p.batch(by: Self.isUppercase, count: 2) } == "-[AB]--[C][de]----[F][gh]|")
        #expect(
            run(input) { p, clock in p.batch(by: Self.isUppercase, every: .milliseconds(3), scheduler: clock) }
                == "---[ABC]---[de]--[F]-([gh]|)")
        // The same with a predicate over neighbours.
        #expect(
            run(input) { p, _ in p.batch(while: { Self.isUppercase($0) == Self.isUppercase($1) }) }
                == "----[ABC]---[de]-[F]-([gh]|)")
    }

    /// A gap threshold: a new batch when two elements arrive more than 2 ms apart, each stamped
    /// with the clock's time as it enters the stages.
    @Test func documentedGapTimeline() {
        let input = "ab-c-----de-f-------g|"
        func gaps(_ every: Int?) -> Stages {
            { pipeline, clock in
                let stamped = pipeline.map { (value: $0, at: clock.now) }
                typealias Stamped = (value: String, at: SchedulerInstant)
                let apart: @Sendable (Stamped, Stamped) -> Bool = { previous, next in
                    next.at.offset - previous.at.offset <= .milliseconds(2)
                }
                let batched =
                    if let every {
                        stamped.batch(while: apart, every: .milliseconds(every), scheduler: clock)
                    } else {
                        stamped.batch(while: apart)
                    }
                return batched.map { $0.map(\.value) }
            }
        }
        #expect(run(input, gaps(nil)) == "---------[abc]----------[def]([g]|)")
        // A time limit bounds how long a batch waits for the element that ends it.
        #expect(run(input, gaps(5)) == "-----[abc]--------[def]------([g]|)")
    }

    // MARK: The rules

    @Test func runsNotGroupsAKeyThatComesBackOpensANewBatch() {
        #expect(run("AbAb|") { p, _ in p.batch(by: Self.isUppercase) } == "-[A][b][A]([b]|)")
    }

    @Test func aSingleRunWaitsForFlushOrFinish() {
        #expect(run("ABCDE---!FG-|") { p, _ in p.batch(by: { _ in 42 }) } == "--------[ABCDE]---([FG]|)")
        #expect(run("AB!!!") { p, _ in p.batch(while: { _, _ in true }) } == "--[AB]", "no empty batch on flush")
    }

    @Test func cancelDiscardsTheOpenBatchAndItsTimer() {
        let result = run("AB-^----------") { p, clock in
            p.batch(by: Self.isUppercase, every: .milliseconds(5), scheduler: clock)
        }
        #expect(result == "---^")
        #expect(result.pendingTimers == 0)
    }

    @Test func aLateTimerClosesTheBatchBeforeAnElementAtItsDeadline() {
        // With the inputs before the timers of their instant, C arrives at A's deadline.
        let result = run("A-C--", marbles: Marbles(arrival: .beforeTimers)) { p, clock in
            p.batch(by: Self.isUppercase, every: .milliseconds(2), scheduler: clock)
        }
        #expect(result == "--[A]-[C]")
    }

    // MARK: The closures

    @Test func theKeyRunsOncePerElementAndThePredicateOnlyWithABatchOpen() {
        let keys = Locked(uncounted: 0)
        let comparisons = Locked<[String]>(uncounted: [])
        _ = run("ABcD|") { p, _ in
            p.batch(by: { value in
                keys.withLock { $0 += 1 }
                return Self.isUppercase(value)
            })
        }
        #expect(keys.withLock { $0 } == 4)
        _ = run("AB-CD|") { p, _ in
            p.batch(
                while: { previous, next in
                    comparisons.withLock { $0.append(previous + next) }
                    return true
                }, count: 2)
        }
        // A B fill the batch by count: C opens the next one without a comparison.
        #expect(comparisons.withLock { $0 } == ["AB", "CD"])
    }

    @Test func theClosuresRunOutsideEveryLockInOrder() {
        let seen = Locked<[String]>(uncounted: [])
        let result = run("abc|") { p, _ in
            p.batch(while: { previous, next in
                seen.withLock { $0.append(previous + next) }
                #expect(LockDiagnostics.locksHeldByCurrentThread == 0)
                return true
            })
        }
        #expect(result == "---([abc]|)")
        #expect(seen.withLock { $0 } == ["ab", "bc"])
    }

    /// A key's deinit stands for user code: each key the stage lets go of (replaced by the next
    /// element's, or with its batch: split, count, timer, flush, finish) is released outside the
    /// stage's lock.
    @Test func keysAreReleasedOutsideEveryLock() {
        struct ProbeKey: Equatable, Sendable {
            let group: String
            let probe: ReleaseProbe
            static func == (lhs: Self, rhs: Self) -> Bool { lhs.group == rhs.group }
        }
        let log = Recorder<String>()
        let clock = ManualScheduler()
        let delivered = Recorder<[String]>()
        let receptionist = Receptionist.pipeline(of: String.self)
            .batch(
                by: { ProbeKey(group: String($0.prefix(1)), probe: ReleaseProbe($0, log: log)) }, count: 3,
                every: .milliseconds(5), scheduler: clock
            )
            .deliver(on: .immediate) { delivered.append($0) }
        for value in ["a1", "a2", "b1", "b2", "b3", "c1"] { receptionist.send(value) }  // split, count
        clock.advance(by: .milliseconds(5))  // c1's batch by time
        receptionist.send("d1")
        receptionist.flush()
        receptionist.send("e1")
        receptionist.finish()
        #expect(delivered.values == [["a1", "a2"], ["b1", "b2", "b3"], ["c1"], ["d1"], ["e1"]])
        #expect(log.values.count == 8, "every key released: \(log.values)")
        #expect(log.values.allSatisfy { $0.hasSuffix("outside") }, "\(log.values)")
    }

    @Test func observedChangesAreBatchedByTheirNewValue() {
        let box = ObservableValue(0)
        let delivered = Locked<[[Int]]>(uncounted: [])
        let token = box.receptionist()
            .batch(by: { $0.newValue % 2 })
            .deliver(on: .immediate) { batch in delivered.withLock { $0.append(batch.map(\.newValue)) } }
        for value in [2, 4, 5, 7, 8] { box.value = value }
        token.finish()
        #expect(delivered.withLock { $0 } == [[2, 4], [5, 7], [8]])
    }
}
