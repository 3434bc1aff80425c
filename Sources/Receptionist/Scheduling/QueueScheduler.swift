import Dispatch

/// A ``DeliveryScheduler`` that runs its work on a target (a `DispatchQueue`, an
/// `OperationQueue`, any ``DeliveryTarget``), on the uptime clock: pass `.on(queue)` as the
/// scheduler of a time-based stage.
///
/// ```swift
/// .throttle(for: .milliseconds(100), scheduler: .on(timerQueue), latest: true)
/// ```
///
/// ## Clock and timers
/// - ``now`` reads the uptime clock (`DispatchTime.now().uptimeNanoseconds`): monotonic
///   (`mach_absolute_time` on Darwin, `CLOCK_MONOTONIC` on Linux), it does not advance while the
///   system is asleep, and it is the same for every `QueueScheduler`.
/// - ``submit(at:_:)`` on a `DispatchQueue` uses its `asyncAfter`, so the work runs on the queue
///   as any block submitted to it; on any other target, a timer on a global queue waits for the
///   deadline and then submits the work to the target (an `OperationQueue` runs it as an
///   operation, with its concurrency limit and `OperationQueue.current`). Dispatch may coalesce
///   timers, so do not rely on the order of work items whose deadlines are close together.
/// - Cancelling through the ``ScheduledWork`` handle is honoured up to the moment the work
///   starts: work cancelled before then never runs.
///
/// A wrapper rather than members on `DispatchQueue` and `OperationQueue`, so that the library
/// adds no `now` or `submit(at:)` to system types (Combine's `Scheduler` gives `DispatchQueue` a
/// `now` on Apple platforms).
public struct QueueScheduler: DeliveryScheduler {
    /// Where the work runs.
    public let target: any DeliveryTarget

    /// Whether this is ``stageTimers``, which a pipeline replaces when it starts.
    let isStageDefault: Bool

    /// A scheduler running its work on `target`.
    public init(_ target: some DeliveryTarget) {
        self.target = target
        self.isStageDefault = false
    }

    private init(stageDefaultOn queue: DispatchQueue) {
        self.target = queue
        self.isStageDefault = true
    }

    /// The default scheduler of time-based stages: a new serial queue for each stage, on which
    /// its timers fire, at the quality of service of the pipeline's target. One per stage, so that
    /// what runs on it (the stages after it, and an `.immediate` task block) never delays the
    /// timers of another pipeline.
    ///
    /// The target is not known yet when an operator evaluates this default: this is a marker,
    /// which each start of the pipeline replaces with a queue of the stage's own
    /// (``StageTimers/scheduler(for:)``). Its own queue only runs timers if it ever escaped that.
    @usableFromInline
    static var stageTimers: QueueScheduler {
        QueueScheduler(stageDefaultOn: unresolvedStageTimers)
    }

    private static let unresolvedStageTimers = DispatchQueue(label: "Receptionist.stageTimers")

    /// Submits `work` to the target.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        target.submit(work)
    }

    /// The current time of the uptime clock. Safe to read from any thread.
    public var now: SchedulerInstant { .uptimeNow }

    /// Runs `work` on the target once the uptime clock reaches `deadline` (at once if it has
    /// passed); see ``QueueScheduler`` for how.
    @discardableResult
    public func submit(at deadline: SchedulerInstant, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        if let queue = target as? DispatchQueue {
            queue.asyncAfter(deadline: deadline.dispatchTime) { scheduled.run() }
        } else {
            let target = target
            DispatchQueue.global().asyncAfter(deadline: deadline.dispatchTime) {
                guard !scheduled.isCancelled else { return }
                target.submit { scheduled.run() }
            }
        }
        return scheduled
    }
}

extension DeliveryScheduler where Self == QueueScheduler {
    /// A scheduler on the uptime clock that runs its work on `target`:
    /// `scheduler: .on(queue)`.
    public static func on(_ target: some DeliveryTarget) -> QueueScheduler {
        QueueScheduler(target)
    }
}
