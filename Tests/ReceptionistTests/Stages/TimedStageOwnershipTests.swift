import Testing

@testable import Receptionist

/// A time-based stage owns each element it receives (it is handed over, not lent): it keeps it,
/// hands it on, or lets go of it through its action. Each element must so die exactly once, and
/// outside every lock (its deinit stands for user code), whichever way the stage parted with it:
/// handed on at the leading or trailing edge, replaced by a later one, dropped in a window,
/// flushed, or handed on at the finish.
@Suite struct TimedStageOwnershipTests {
    /// An element that logs its deinit (under how many of the library's locks) and its value.
    struct Probe: Sendable {
        let value: Int
        let probe: ReleaseProbe
    }

    /// Sends 0..<count, `gap` apart on the manual clock, through `stage`, then flushes, sends one
    /// more and finishes; returns the delivered values and the release log, once every element
    /// the run made is gone.
    func run(
        count: Int,
        gap: Duration,
        _ stage: (Pipeline<ReceptionistInput<Probe>, Probe>, ManualScheduler) -> Pipeline<
            ReceptionistInput<Probe>, Probe
        >
    ) -> (delivered: [Int], released: [String]) {
        let log = Recorder<String>()
        let delivered = Recorder<Int>()
        do {
            let clock = ManualScheduler()
            let receptionist = stage(Receptionist.pipeline(of: Probe.self), clock)
                .deliver(on: .immediate) { delivered.append($0.value) }
            for value in 0..<count {
                receptionist.send(Probe(value: value, probe: ReleaseProbe("\(value)", log: log)))
                clock.advance(by: gap)
            }
            receptionist.flush()
            receptionist.send(Probe(value: count, probe: ReleaseProbe("\(count)", log: log)))
            receptionist.finish()
            clock.advance(by: .seconds(1))
        }
        return (delivered.values, log.values)
    }

    func expectEachReleasedOnceOutsideLocks(_ released: [String], count: Int) {
        let names = released.map { String($0.prefix { $0 != ":" }) }
        #expect(names.sorted() == (0...count).map { "\($0)" }.sorted(), "each element released once: \(released)")
        #expect(released.allSatisfy { $0.hasSuffix("outside") }, "\(released)")
    }

    @Test(arguments: [true, false])
    func throttleLatestOrFirst(latest: Bool) {
        // 3 ms apart in 10 ms windows: most elements are replaced (latest) or dropped (first).
        let (delivered, released) = run(count: 40, gap: .milliseconds(3)) { pipeline, clock in
            pipeline.throttle(for: .milliseconds(10), scheduler: clock, latest: latest)
        }
        #expect(delivered.first == 0, "the leading edge")
        #expect(delivered.last == 40, "the element sent after the flush, handed on at its leading edge")
        #expect(delivered == delivered.sorted() && Set(delivered).count == delivered.count)
        #expect(delivered.count < 41, "the windows dropped some")
        expectEachReleasedOnceOutsideLocks(released, count: 40)
    }

    @Test(arguments: [(true, false), (false, true)])
    func throttleOneEdge(leading: Bool, trailing: Bool) {
        let (delivered, released) = run(count: 40, gap: .milliseconds(3)) { pipeline, clock in
            pipeline.throttle(for: .milliseconds(10), scheduler: clock, leading: leading, trailing: trailing)
        }
        #expect(!delivered.isEmpty && delivered == delivered.sorted())
        expectEachReleasedOnceOutsideLocks(released, count: 40)
    }

    @Test func debounce() {
        // 3 ms apart with a 5 ms quiet time: each element replaces the one pending.
        let (delivered, released) = run(count: 40, gap: .milliseconds(3)) { pipeline, clock in
            pipeline.debounce(for: .milliseconds(5), scheduler: clock)
        }
        #expect(delivered == [39, 40], "the flush hands on the last pending; the finish the one after")
        expectEachReleasedOnceOutsideLocks(released, count: 40)
    }

    @Test func debounceWithMaxWait() {
        let (delivered, released) = run(count: 40, gap: .milliseconds(3)) { pipeline, clock in
            pipeline.debounce(for: .milliseconds(5), maxWait: .milliseconds(20), scheduler: clock)
        }
        #expect(delivered.count > 2, "maxWait hands on during the burst: \(delivered)")
        #expect(delivered == delivered.sorted() && delivered.last == 40)
        expectEachReleasedOnceOutsideLocks(released, count: 40)
    }

    @Test func batchByCountAndTime() {
        let (delivered, released) = run(count: 40, gap: .milliseconds(3)) { pipeline, clock in
            pipeline.batch(count: 4, every: .milliseconds(10), scheduler: clock).map { $0.last! }
        }
        #expect(delivered.last == 40)
        expectEachReleasedOnceOutsideLocks(released, count: 40)
    }

    /// Feeds 40 probes, 3 ms apart, into `machine` without keeping them, and keeps every action:
    /// nothing may die while the actions and the machine live (an input the machine destroyed
    /// itself would, under its stage's lock); everything dies once they are gone.
    func expectMachineNeverDestroysAnInput<Machine: TimedStateMachine>(_ machine: Machine)
    where Machine.Input == Probe {
        let log = Recorder<String>()
        do {
            var machine = machine
            var actions: [TimedStageAction<Probe, Machine.Output>] = []
            for value in 0..<40 {
                let now = SchedulerInstant.zero + .milliseconds(3 * value)
                // Made in the call, so that the machine holds the only reference.
                actions.append(
                    machine.received(Probe(value: value, probe: ReleaseProbe("\(value)", log: log)), at: now))
                if case .arm(let deadline, let generation) = actions.last!.timer, deadline <= now + .milliseconds(3) {
                    actions.append(machine.timerFired(generation: generation, at: deadline))
                }
            }
            #expect(log.values.isEmpty, "\(Machine.self) destroyed inputs itself: \(log.values)")
            actions.append(machine.finish(at: .zero + .seconds(1)))
        }
        #expect(log.values.count == 40, "\(Machine.self): every input died once its holders did: \(log.values)")
    }

    @Test func aMachineNeverDestroysAnInputItself() {
        expectMachineNeverDestroysAnInput(ThrottleStateMachine<Probe>(interval: .milliseconds(10), latest: true))
        expectMachineNeverDestroysAnInput(ThrottleStateMachine<Probe>(interval: .milliseconds(10), latest: false))
        expectMachineNeverDestroysAnInput(
            ThrottleStateMachine<Probe>(interval: .milliseconds(10), leading: true, trailing: .none))
        expectMachineNeverDestroysAnInput(
            ThrottleStateMachine<Probe>(interval: .milliseconds(10), leading: false, trailing: .latest))
        expectMachineNeverDestroysAnInput(DebounceStateMachine<Probe>(interval: .milliseconds(5)))
        expectMachineNeverDestroysAnInput(
            DebounceStateMachine<Probe>(interval: .milliseconds(5), maxWait: .milliseconds(20)))
        expectMachineNeverDestroysAnInput(BatchStateMachine<Probe>(count: 4, interval: .milliseconds(10)))
    }
}
