/// The node of every time-based stage: a ``TimedStateMachine`` in a lock, the stage's timer,
/// and the next stage.
///
/// Each event (an element, a timer fire, flush, finish) is one step: the machine decides under
/// the lock; outside it, the node arms or cancels the timer, hands the outputs on and releases
/// what the machine let go of. The pipeline's intake calls the node one event at a time
/// (``StagedPipeline``), so the lock is never contended; it lets the compiler check that the
/// node is `Sendable`.
@usableFromInline
final class TimedStage<Machine: TimedStateMachine>: StageNode, TimedStageNode {
    @usableFromInline let machine: Locked<Machine>
    /// `nil` for a stage that never arms a timer (a count-only batch): its clock reads zero.
    @usableFromInline let timer: StageTimer?
    @usableFromInline let downstream: StageInlet<Machine.Output>

    @usableFromInline
    init(machine: Machine, timer: StageTimer?, downstream: StageInlet<Machine.Output>) {
        self.machine = Locked(machine)
        self.timer = timer
        self.downstream = downstream
    }

    @inlinable
    func receive(_ input: Machine.Input) {
        let now = timer?.now ?? .zero
        // One copy, into the machine, which owns it from there: it keeps it, hands it on or
        // releases it through the action, without copying it again. (Taken by move instead,
        // through an Optional in the closure, the Optional's tag and the action went through
        // value witnesses: about 160 instructions per element in a profile of the "batch" row.
        // Passed from node to node by move, the intake's drain, which only lends each event,
        // had to copy it first, also for a head stage that keeps nothing, a map.)
        step { $0.received(input, at: now) }
    }

    @usableFromInline
    func timerFired(_ id: Int) {
        // The timer may only have been moved (``StageTimer``): the machine hears of a fire when
        // the deadline it asked for has come.
        guard let timer, let generation = timer.fired(id, for: self) else { return }
        let now = timer.now
        step { $0.timerFired(generation: generation, at: now) }
    }

    @usableFromInline
    func flush() {
        let now = timer?.now ?? .zero
        step { $0.flush(at: now) }
        downstream.flush()
    }

    @usableFromInline
    func finish() {
        let now = timer?.now ?? .zero
        step { $0.finish(at: now) }
        downstream.finish()
    }

    @inlinable
    func step(_ event: (inout Machine) -> TimedStageAction<Machine.Input, Machine.Output>) {
        // In a flow-controlled pipeline, what a stage with a timer keeps counts against the bound
        // (it hands it on by itself); a stage without one only hands on at the next element.
        if let gate = timer?.timers.gate {
            let (action, held) = machine.withLockThenRelease { machine in
                let before = machine.heldCount
                var action = event(&machine)
                let released = action.released.take()
                return ((action, machine.heldCount &- before), released: released)
            }
            if held != 0 { gate.stagesHold(held) }
            if action.timer != .none { timer?.perform(action.timer, for: self) }
            for output in action.outputs { downstream.receive(output) }
            return
        }
        let action = machine.withLockThenRelease { machine in
            var action = event(&machine)
            let released = action.released.take()
            return (action, released: released)
        }
        if action.timer != .none { timer?.perform(action.timer, for: self) }
        for output in action.outputs { downstream.receive(output) }
    }
}

/// A node that arms timers through ``StageTimers``.
@usableFromInline
protocol TimedStageNode: AnyObject, Sendable {
    /// The timer `id` (``TimerFire/id``) fired. Called by the intake, like ``StageNode/receive(_:)``.
    func timerFired(_ id: Int)
}

extension Pipeline {
    /// This pipeline followed by a time-based stage that `machine` decides.
    ///
    /// - Parameters:
    ///   - operatorName: the operator, for messages.
    ///   - machine: the stage's state machine, in its initial state.
    ///   - scheduler: the clock and timers; `nil` for a stage that never arms a timer.
    @inlinable
    func adding<Machine: TimedStateMachine>(
        _ operatorName: @autoclosure () -> String,
        timed machine: Machine,
        scheduler: (any DeliveryScheduler)?
    ) -> Pipeline<Source, Machine.Output> where Machine.Input == Output {
        let name = operatorName()
        return adding(name) { downstream, timers in
            // What a time-based stage keeps counts against the bound as elements (its machine's
            // `heldCount`): they are no longer the pipeline's input, so they have no weight.
            if scheduler != nil, let gate = timers.gate, gate.weighs {
                invalidConfiguration(
                    "deliver(on:buffering:weighing:_:): \(name) keeps elements that cannot be weighed (they are "
                        + "not the pipeline's input), so the watermarks could not bound them; weigh a pipeline "
                        + "without time-based stages, or bound this one by count (no weighing)")
            }
            return StageInlet(
                TimedStage(
                    machine: machine,
                    timer: scheduler.map { StageTimer(timers: timers, scheduler: $0) },
                    downstream: downstream
                )
            )
        }
    }
}
