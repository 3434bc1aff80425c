import Dispatch

/// A debouncing stage: a ``DebounceStateMachine`` in a lock, and its timer.
@usableFromInline
final class DebounceStage<Element: Sendable>: StageNode, TimedStageNode {
    @usableFromInline let machine: Locked<DebounceStateMachine<Element>>
    @usableFromInline let timer: StageTimer
    @usableFromInline let downstream: StageInlet<Element>

    @inlinable
    init(machine: DebounceStateMachine<Element>, timer: StageTimer, downstream: StageInlet<Element>) {
        self.machine = Locked(machine)
        self.timer = timer
        self.downstream = downstream
    }

    @inlinable
    func receive(_ input: Element) {
        let now = timer.now
        perform(machine.withLock { $0.received(input, at: now) })
    }

    @inlinable
    func timerFired(generation: Int) {
        let now = timer.now
        perform(machine.withLock { $0.timerFired(generation: generation, at: now) })
    }

    @inlinable
    func flush() {
        perform(machine.withLock { $0.flush() })
        downstream.flush()
    }

    @inlinable
    func finish() {
        perform(machine.withLock { $0.flush() })
        downstream.finish()
    }

    @inlinable
    func perform(_ action: DebounceStateMachine<Element>.Action) {
        timer.perform(action.timer, for: self)
        for output in action.outputs { downstream.receive(output) }
    }
}

extension Pipeline {
    /// Hands on an output once `interval` has passed without a newer one; each newer output
    /// replaces it and restarts the wait.
    ///
    /// An output arriving exactly `interval` after the pending one does not replace it: the
    /// pending one is due and is handed on first. `flush()` and `finish()` hand on the pending
    /// output at once, so the last state is not lost; `cancel()` discards it.
    ///
    /// ```
    /// debounce(for: .milliseconds(10))
    /// time (ms)  0  3  6  ..  16  ..  30  ..  40
    /// input      a  b  c              d
    /// output                  c               d
    /// ```
    ///
    /// - Parameters:
    ///   - interval: the quiet time an output waits for, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the library's own. The
    ///     stages after this one run on it.
    @inlinable
    public func debounce(
        for interval: Duration,
        scheduler: some DeliveryScheduler = DispatchQueue.stageTimers
    ) -> Pipeline<Source, Output> {
        validate(interval > .zero, "debounce(for:) interval must be greater than zero, got \(interval)")
        return adding { downstream, timers in
            StageInlet(
                DebounceStage(
                    machine: DebounceStateMachine(interval: interval),
                    timer: StageTimer(timers: timers, scheduler: scheduler),
                    downstream: downstream
                )
            )
        }
    }
}
