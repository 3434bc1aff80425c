extension Pipeline {
    /// Hands on at most one output per `interval`: the first of a burst at once (leading edge),
    /// then, at the end of each window, the latest (or, without `latest`, the first) output that
    /// arrived during it (trailing edge).
    ///
    /// The same as `throttle(for:scheduler:leading: true, trailing: true)` when `latest`.
    /// Without `latest`, it is the counterpart of Combine's `throttle(latest: false)`.
    /// `flush()` and `finish()` hand on the held output; `cancel()` discards it. The exact
    /// rules, with a timeline: <doc:Stages#throttle>; how they differ from Combine's:
    /// <doc:Stages#Where-this-differs-from-Combine>.
    ///
    /// - Parameters:
    ///   - interval: the shortest time between two outputs, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
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

    /// Hands on at most one output per `interval`, with the edges you choose: the first output
    /// of a burst at once (`leading`), and the latest output of each window when it ends
    /// (`trailing`).
    ///
    /// - `leading: true, trailing: true`: the first of a burst at once, then the latest of each
    ///   window; the last state always arrives, at most `interval` after it was made.
    /// - `leading: true, trailing: false`: the first of each burst; outputs inside a window are
    ///   dropped, so the last state may not arrive (as RxSwift's `throttle(_:latest: false)` and
    ///   lodash's `{ trailing: false }`; not Combine's `throttle(latest: false)`, which hands on
    ///   the first output of each window when it ends: that is `throttle(for:scheduler:latest:)`).
    /// - `leading: false, trailing: true`: nothing at once; the latest of each window when it
    ///   ends.
    ///
    /// `flush()` and `finish()` hand on the held output; `cancel()` discards it. The exact
    /// rules, with timelines: <doc:Stages#throttle>.
    ///
    /// - Parameters:
    ///   - interval: the shortest time between two outputs, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
    ///   - leading: whether the first output of a burst is handed on at once.
    ///   - trailing: whether each window hands on the latest output that arrived in it. At least
    ///     one of `leading` and `trailing` must be `true`.
    @inlinable
    public func throttle(
        for interval: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers,
        leading: Bool,
        trailing: Bool
    ) -> Pipeline<Source, Output> {
        validate(
            interval > .zero, "throttle(for:leading:trailing:) interval must be greater than zero, got \(interval)")
        validate(
            leading || trailing,
            "throttle(for:leading:trailing:) leading and trailing are both false: nothing would ever be handed on"
        )
        return adding(
            "throttle(for:leading:trailing:)",
            timed: ThrottleStateMachine(interval: interval, leading: leading, trailing: trailing ? .latest : .none),
            scheduler: scheduler
        )
    }
}
