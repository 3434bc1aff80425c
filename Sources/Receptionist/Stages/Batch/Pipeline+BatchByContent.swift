extension Pipeline {
    /// Collects consecutive outputs into one batch while `belongs(previous, next)` returns
    /// `true`, `previous` being the last output of the open batch; an output for which it
    /// returns `false` hands on the open batch at once and opens the next one.
    ///
    /// ```swift
    /// struct Reading: Sendable { var time: ContinuousClock.Instant; var value: Double }
    /// // A new batch when two readings are more than 5 seconds apart.
    /// let bursts = Receptionist.pipeline(of: Reading.self)
    ///     .batch(while: { previous, next in next.time - previous.time <= .seconds(5) })
    ///     .deliver(on: .mainActor) { burst in print(burst.count) }
    /// ```
    ///
    /// `belongs` runs as every stage closure does (see ``Pipeline``): one output at a time, in
    /// order, outside every lock; it is called for each output that arrives while a batch is
    /// open. Order is kept; empty batches are never delivered; `flush()` and `finish()` hand on
    /// the open batch, `cancel()` discards it. The exact rules, with timelines:
    /// <doc:Stages#Batching-by-content>.
    ///
    /// - Parameters:
    ///   - belongs: whether `next` belongs in the same batch as `previous`.
    ///   - count: the largest batch, at least 1; `nil` (the default): no limit.
    @inlinable
    public func batch(
        while belongs: @escaping @Sendable (_ previous: Output, _ next: Output) -> Bool,
        count: Int? = nil
    ) -> Pipeline<Source, [Output]> {
        validateBatchCount(count, "batch(while:count:)")
        return batch("batch(while:count:)", count: count, interval: nil, scheduler: nil, key: { $0 }, belongs: belongs)
    }

    /// Collects consecutive outputs into one batch while `belongs(previous, next)` returns
    /// `true`, and hands a batch on at the latest `interval` after its first output (or when it
    /// holds `count` outputs), as ``batch(while:count:)`` and `batch(count:every:)` together.
    ///
    /// `belongs` runs as every stage closure does (see ``Pipeline``), never on the scheduler: it
    /// is called when an output arrives, not when a timer fires. See
    /// <doc:Stages#Batching-by-content>.
    ///
    /// - Parameters:
    ///   - belongs: whether `next` belongs in the same batch as `previous`.
    ///   - count: the largest batch, at least 1; `nil` (the default): no limit.
    ///   - interval: the longest a batch stays open, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
    @inlinable
    public func batch(
        while belongs: @escaping @Sendable (_ previous: Output, _ next: Output) -> Bool,
        count: Int? = nil,
        every interval: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers
    ) -> Pipeline<Source, [Output]> {
        validateBatchCount(count, "batch(while:count:every:)")
        validate(interval > .zero, "batch(while:count:every:) interval must be greater than zero, got \(interval)")
        return batch(
            "batch(while:count:every:)", count: count, interval: interval, scheduler: scheduler, key: { $0 },
            belongs: belongs)
    }

    /// Collects each run of consecutive outputs with equal keys into one batch: an output whose
    /// `key` differs from the open batch's hands that batch on at once and opens the next one.
    ///
    /// ```swift
    /// struct Reading: Sendable { var sensorID: String; var value: Double }
    /// // One batch per run of readings from one sensor.
    /// let perSensor = Receptionist.pipeline(of: Reading.self)
    ///     .batch(by: { $0.sensorID })
    ///     .deliver(on: .mainActor) { run in print(run[0].sensorID, run.count) }
    /// ```
    ///
    /// Runs, not groups: outputs with one key that are not consecutive go to separate batches.
    /// `key` runs once per output, as every stage closure does (see ``Pipeline``): one output at
    /// a time, in order, outside every lock. Order is kept; empty batches are never delivered;
    /// `flush()` and `finish()` hand on the open batch, `cancel()` discards it. The exact rules,
    /// with timelines: <doc:Stages#Batching-by-content>.
    ///
    /// - Parameters:
    ///   - key: the key of an output; outputs with equal keys in a row share a batch.
    ///   - count: the largest batch, at least 1; `nil` (the default): no limit.
    @inlinable
    public func batch<Key: Equatable & Sendable>(
        by key: @escaping @Sendable (Output) -> Key,
        count: Int? = nil
    ) -> Pipeline<Source, [Output]> {
        validateBatchCount(count, "batch(by:count:)")
        return batch("batch(by:count:)", count: count, interval: nil, scheduler: nil, key: key, belongs: Self.equal)
    }

    /// Collects each run of consecutive outputs with equal keys into one batch, and hands a
    /// batch on at the latest `interval` after its first output (or when it holds `count`
    /// outputs), as ``batch(by:count:)`` and `batch(count:every:)` together.
    ///
    /// `key` runs as every stage closure does (see ``Pipeline``), never on the scheduler: it is
    /// called when an output arrives, not when a timer fires. See
    /// <doc:Stages#Batching-by-content>.
    ///
    /// - Parameters:
    ///   - key: the key of an output; outputs with equal keys in a row share a batch.
    ///   - count: the largest batch, at least 1; `nil` (the default): no limit.
    ///   - interval: the longest a batch stays open, greater than zero.
    ///   - scheduler: the clock and timers; by default a serial queue of the stage's own.
    @inlinable
    public func batch<Key: Equatable & Sendable>(
        by key: @escaping @Sendable (Output) -> Key,
        count: Int? = nil,
        every interval: Duration,
        scheduler: some DeliveryScheduler = QueueScheduler.stageTimers
    ) -> Pipeline<Source, [Output]> {
        validateBatchCount(count, "batch(by:count:every:)")
        validate(interval > .zero, "batch(by:count:every:) interval must be greater than zero, got \(interval)")
        return batch(
            "batch(by:count:every:)", count: count, interval: interval, scheduler: scheduler, key: key,
            belongs: Self.equal)
    }

    /// `==` for keys, typed: given as `==`, the key type of the stage would be inferred as
    /// `Key?`, with every key wrapped in an optional.
    @inlinable
    static func equal<Key: Equatable>(_ previous: Key, _ next: Key) -> Bool { previous == next }

    @inlinable
    func validateBatchCount(_ count: Int?, _ operatorName: String) {
        if let count { validate(count >= 1, "\(operatorName) count must be at least 1, got \(count)") }
    }

    @inlinable
    func batch<Key: Sendable>(
        _ operatorName: String,
        count: Int?,
        interval: Duration?,
        scheduler: (any DeliveryScheduler)?,
        key: @escaping @Sendable (Output) -> Key,
        belongs: @escaping @Sendable (_ previous: Key, _ next: Key) -> Bool
    ) -> Pipeline<Source, [Output]> {
        let machine = ContentBatchStateMachine<Output, Key>(count: count, interval: interval)
        return adding(operatorName) { downstream, timers in
            StageInlet(
                ContentBatchStage(
                    machine: machine,
                    timer: scheduler.map { StageTimer(timers: timers, scheduler: $0) },
                    downstream: downstream,
                    key: key,
                    belongs: belongs
                )
            )
        }
    }
}
