import Dispatch

/// The timer of one time-based stage: its scheduler, and the one timer it has armed.
@usableFromInline
final class StageTimer: Sendable {
    let timers: StageTimers
    @usableFromInline let scheduler: any DeliveryScheduler
    let armed = Locked<Int?>(nil)

    @usableFromInline
    init(timers: StageTimers, scheduler: any DeliveryScheduler) {
        self.timers = timers
        self.scheduler = scheduler
    }

    @inlinable
    var now: SchedulerInstant { scheduler.now }

    /// Performs what the stage's state machine asked of its timer.
    @inlinable
    func perform(_ action: TimerAction, for node: any TimedStageNode) {
        if action != .none { change(action, for: node) }
    }

    @usableFromInline
    func change(_ action: TimerAction, for node: any TimedStageNode) {
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

extension DispatchQueue {
    /// The default scheduler of time-based stages: a serial queue of the library's own, on which
    /// timers fire (and the stages after a timer's stage run, when it fires).
    @usableFromInline
    static let stageTimers = DispatchQueue(label: "Receptionist.stageTimers", qos: .userInitiated)

    /// Where a pipeline's stages continue when a burst keeps its intake busy (see
    /// ``StagedPipeline``).
    @usableFromInline
    static let stageQueue = DispatchQueue(
        label: "Receptionist.stages",
        qos: .userInitiated,
        attributes: .concurrent
    )
}

/// Stops the program with a message naming the operator and parameter, for a configuration
/// that cannot work.
@usableFromInline
func validate(_ condition: Bool, _ message: @autoclosure () -> String) {
    precondition(condition, "Receptionist: " + message())
}
