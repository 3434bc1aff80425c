extension Pipeline {
    /// Collects outputs into batches, handed on when a batch holds `count` outputs or when
    /// `interval` has passed since its first output, whichever comes first.
    ///
    /// Order is kept; empty batches are never delivered; `flush()` and `finish()` hand on a
    /// partial batch, `cancel()` discards it. The exact rules, with a timeline:
    /// <doc:Stages#batch>.
    ///
    /// - Parameters:
    ///   - count: the largest batch, at least 1.
    ///   - interval: the longest a batch stays open, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
    ///     Pass a ``ManualScheduler`` to test a pipeline with time under your control.
    @inlinable
    public func batch(
        count: Int,
        every interval: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers
    ) -> Pipeline<Source, [Output]> {
        validate(count >= 1, "batch(count:every:) count must be at least 1, got \(count)")
        validate(interval > .zero, "batch(count:every:) interval must be greater than zero, got \(interval)")
        return batch("batch(count:every:)", count: count, interval: interval, scheduler: scheduler)
    }

    /// Collects outputs into batches of `count`, in order; see <doc:Stages#batch>.
    ///
    /// The last, partial batch waits for `flush()` or `finish()`.
    ///
    /// - Parameter count: the batch size, at least 1.
    @inlinable
    public func batch(count: Int) -> Pipeline<Source, [Output]> {
        validate(count >= 1, "batch(count:) count must be at least 1, got \(count)")
        return batch("batch(count:)", count: count, interval: nil, scheduler: nil)
    }

    /// Collects the outputs that arrive within `interval` of a batch's first output into one
    /// batch, in order; see <doc:Stages#batch>.
    ///
    /// - Parameters:
    ///   - interval: how long a batch stays open, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
    @inlinable
    public func batch(
        every interval: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers
    ) -> Pipeline<Source, [Output]> {
        validate(interval > .zero, "batch(every:) interval must be greater than zero, got \(interval)")
        return batch("batch(every:)", count: nil, interval: interval, scheduler: scheduler)
    }

    @inlinable
    func batch(
        _ operatorName: String,
        count: Int?,
        interval: Duration?,
        scheduler: (any DeliveryScheduler)?
    ) -> Pipeline<Source, [Output]> {
        adding(operatorName, timed: BatchStateMachine(count: count, interval: interval), scheduler: scheduler)
    }
}
