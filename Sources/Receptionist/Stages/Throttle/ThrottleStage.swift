import Dispatch

/// A throttling stage: a ``ThrottleStateMachine`` in a lock, and its timer.
@usableFromInline
final class ThrottleStage<Element: Sendable>: StageNode, TimedStageNode {
    @usableFromInline let machine: Locked<ThrottleStateMachine<Element>>
    @usableFromInline let timer: StageTimer
    @usableFromInline let downstream: StageInlet<Element>

    @inlinable
    init(machine: ThrottleStateMachine<Element>, timer: StageTimer, downstream: StageInlet<Element>) {
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
        let now = timer.now
        perform(machine.withLock { $0.flush(at: now) })
        downstream.flush()
    }

    @inlinable
    func finish() {
        perform(machine.withLock { $0.finish() })
        downstream.finish()
    }

    @inlinable
    func perform(_ action: ThrottleStateMachine<Element>.Action) {
        timer.perform(action.timer, for: self)
        for output in action.outputs { downstream.receive(output) }
    }
}

extension Pipeline {
    /// Hands on at most one output per `interval`: the first of a burst at once, then, at the
    /// end of each interval, the latest (or the first) output that arrived during it.
    ///
    /// Every output opens a window of `interval`. An output arriving when no window is open is
    /// handed on at once (leading edge) and opens one. Outputs arriving inside a window are held
    /// (the latest with `latest: true`, else the first); when the window ends, the held output
    /// is handed on (trailing edge) and opens the next window; with nothing held, the stage goes
    /// idle. So the last state is never lost: it is delivered at most `interval` after it
    /// arrived. An output arriving exactly at a window's end falls in the next window.
    /// `flush()` hands on the held output now (opening a window); `finish()` hands it on;
    /// `cancel()` discards it.
    ///
    /// ```
    /// throttle(for: .milliseconds(10), latest: true)
    /// time (ms)  0  2  4  ..  10  ..  20  ..  35  37  ..  45
    /// input      a  b  c                      d   e
    /// output     a            c               d           e
    /// ```
    ///
    /// - Parameters:
    ///   - interval: the shortest time between two outputs, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the library's own. The
    ///     stages after this one run on it for trailing outputs.
    ///   - latest: whether a window hands on the latest output that arrived in it (`true`) or
    ///     the first.
    @inlinable
    public func throttle(
        for interval: Duration,
        scheduler: some DeliveryScheduler = DispatchQueue.stageTimers,
        latest: Bool
    ) -> Pipeline<Source, Output> {
        validate(interval > .zero, "throttle(for:latest:) interval must be greater than zero, got \(interval)")
        return adding { downstream, timers in
            StageInlet(
                ThrottleStage(
                    machine: ThrottleStateMachine(interval: interval, latest: latest),
                    timer: StageTimer(timers: timers, scheduler: scheduler),
                    downstream: downstream
                )
            )
        }
    }
}
