extension Pipeline {
    /// Hands on at most one output per `interval`: the first of a burst at once (leading edge),
    /// then, at the end of each window, the latest (or the first) output that arrived during it
    /// (trailing edge).
    ///
    /// `flush()` and `finish()` hand on the held output; `cancel()` discards it. The exact
    /// rules, with a timeline: <doc:Stages#throttle>.
    ///
    /// - Parameters:
    ///   - interval: the shortest time between two outputs, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the library's own.
    ///   - latest: whether a window hands on the latest output that arrived in it (`true`) or
    ///     the first.
    @inlinable
    public func throttle(
        for interval: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers,
        latest: Bool
    ) -> Pipeline<Source, Output> {
        validate(interval > .zero, "throttle(for:latest:) interval must be greater than zero, got \(interval)")
        return adding(
            "throttle(for:latest:)",
            timed: ThrottleStateMachine(interval: interval, latest: latest),
            scheduler: scheduler
        )
    }
}
