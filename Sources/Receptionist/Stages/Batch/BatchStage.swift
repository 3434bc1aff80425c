import Dispatch

/// A batching stage: a ``BatchStateMachine`` in a lock, and its timer.
@usableFromInline
final class BatchStage<Element: Sendable>: StageNode, TimedStageNode {
    @usableFromInline let machine: Locked<BatchStateMachine<Element>>
    /// `nil` for a count-only batch.
    @usableFromInline let timer: StageTimer?
    @usableFromInline let downstream: StageInlet<[Element]>

    @inlinable
    init(machine: BatchStateMachine<Element>, timer: StageTimer?, downstream: StageInlet<[Element]>) {
        self.machine = Locked(machine)
        self.timer = timer
        self.downstream = downstream
    }

    @inlinable
    func receive(_ input: Element) {
        let now = timer?.now ?? .zero
        perform(machine.withLock { $0.received(input, at: now) })
    }

    @inlinable
    func timerFired(generation: Int) {
        guard let now = timer?.now else { return }
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
    func perform(_ action: BatchStateMachine<Element>.Action) {
        timer?.perform(action.timer, for: self)
        for batch in action.batches { downstream.receive(batch) }
    }
}

extension Pipeline {
    /// Collects outputs into batches, handed on when a batch holds `count` outputs or when
    /// `interval` has passed since its first output, whichever comes first.
    ///
    /// Order is kept inside and across batches; empty batches are never delivered. An output
    /// arriving exactly `interval` after a batch's first one starts the next batch. A partial
    /// batch is handed on by `flush()` and `finish()` (and when an observed model is
    /// deallocated, which a batch of its own changes delays: see ``Pipeline``); `cancel()`
    /// discards it.
    ///
    /// ```
    /// batch(count: 3, every: .milliseconds(10))
    /// time (ms)  0  1  2      3  ..  13      20  22  ..  30
    /// input      a  b  c      d              e   f
    /// output           [a,b,c]       [d]                 [e,f]
    /// ```
    ///
    /// - Parameters:
    ///   - count: the largest batch, at least 1.
    ///   - interval: the longest a batch stays open, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the library's own.
    ///     Pass a ``ManualScheduler`` to test a pipeline with time under your control. The
    ///     stages after this one run on the scheduler when a batch closes by time.
    @inlinable
    public func batch(
        count: Int,
        every interval: Duration,
        scheduler: some DeliveryScheduler = DispatchQueue.stageTimers
    ) -> Pipeline<Source, [Output]> {
        validate(count >= 1, "batch(count:every:) count must be at least 1, got \(count)")
        validate(interval > .zero, "batch(count:every:) interval must be greater than zero, got \(interval)")
        return batch(count: count, interval: interval, scheduler: scheduler)
    }

    /// Collects outputs into batches of `count`, in order. The last, partial batch is handed on
    /// by `flush()` and `finish()`; `cancel()` discards it.
    ///
    /// - Parameter count: the batch size, at least 1.
    @inlinable
    public func batch(count: Int) -> Pipeline<Source, [Output]> {
        validate(count >= 1, "batch(count:) count must be at least 1, got \(count)")
        return batch(count: count, interval: nil, scheduler: nil)
    }

    /// Collects the outputs that arrive within `interval` of a batch's first output into one
    /// batch, in order; see ``batch(count:every:scheduler:)``.
    ///
    /// - Parameters:
    ///   - interval: how long a batch stays open, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the library's own.
    @inlinable
    public func batch(
        every interval: Duration,
        scheduler: some DeliveryScheduler = DispatchQueue.stageTimers
    ) -> Pipeline<Source, [Output]> {
        validate(interval > .zero, "batch(every:) interval must be greater than zero, got \(interval)")
        return batch(count: nil, interval: interval, scheduler: scheduler)
    }

    @inlinable
    func batch(count: Int?, interval: Duration?, scheduler: (any DeliveryScheduler)?) -> Pipeline<Source, [Output]> {
        adding { downstream, timers in
            StageInlet(
                BatchStage(
                    machine: BatchStateMachine(count: count, interval: interval),
                    timer: scheduler.map { StageTimer(timers: timers, scheduler: $0) },
                    downstream: downstream
                )
            )
        }
    }
}
