extension Pipeline {
    /// Hands on an output once `interval` has passed without a newer one; each newer output
    /// replaces it and restarts the wait.
    ///
    /// `flush()` and `finish()` hand on the pending output at once (Combine's `debounce` drops
    /// it when its input ends); `cancel()` discards it. The exact rules, with a timeline:
    /// <doc:Stages#debounce>.
    ///
    /// - Parameters:
    ///   - interval: the quiet time an output waits for, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
    @inlinable
    public func debounce(
        for interval: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers
    ) -> Pipeline<Source, Output> {
        validate(interval > .zero, "debounce(for:) interval must be greater than zero, got \(interval)")
        return adding("debounce(for:)", timed: DebounceStateMachine(interval: interval), scheduler: scheduler)
    }

    /// Hands on an output once `interval` has passed without a newer one, or at the latest
    /// `maxWait` after the first output of its burst, even if the outputs keep coming; the next
    /// output begins a new burst.
    ///
    /// `flush()` and `finish()` hand on the pending output at once; `cancel()` discards it. The
    /// exact rules, with a timeline: <doc:Stages#debounce>; how they differ from lodash's
    /// `maxWait`: <doc:Stages#Where-this-differs-from-lodash>.
    ///
    /// - Parameters:
    ///   - interval: the quiet time an output waits for, greater than zero.
    ///   - maxWait: the longest an output waits, from the first output of its burst; at least
    ///     `interval`.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
    @inlinable
    public func debounce(
        for interval: Duration,
        maxWait: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers
    ) -> Pipeline<Source, Output> {
        validate(interval > .zero, "debounce(for:maxWait:) interval must be greater than zero, got \(interval)")
        validate(
            maxWait >= interval,
            "debounce(for:maxWait:) maxWait must be at least interval (\(interval)), got \(maxWait)"
        )
        return adding(
            "debounce(for:maxWait:)",
            timed: DebounceStateMachine(interval: interval, maxWait: maxWait),
            scheduler: scheduler
        )
    }
}
