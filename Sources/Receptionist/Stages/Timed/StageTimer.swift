/// The timer of one time-based stage: its scheduler, and the one timer it has armed.
@usableFromInline
final class StageTimer: Sendable {
    private let timers: StageTimers
    @usableFromInline let scheduler: any DeliveryScheduler
    private let armed = Locked<Int?>(nil)

    @usableFromInline
    init(timers: StageTimers, scheduler: any DeliveryScheduler) {
        self.timers = timers
        self.scheduler = timers.scheduler(for: scheduler)
    }

    /// The scheduler's time, read for every element.
    @inlinable
    var now: SchedulerInstant { scheduler.now }

    /// Performs what the stage's state machine asked of its timer.
    @usableFromInline
    func perform(_ action: TimerAction, for node: any TimedStageNode) {
        switch action {
        case .none:
            return
        case .arm(let deadline, let generation):
            let id = timers.arm(node, generation: generation, at: deadline, on: scheduler)
            let replaced = armed.withLock { armed in
                defer { armed = id }
                return armed
            }
            if let replaced { timers.disarm(replaced) }
        case .disarm:
            if let id = armed.withLock({ $0.take() }) { timers.disarm(id) }
        }
    }
}
