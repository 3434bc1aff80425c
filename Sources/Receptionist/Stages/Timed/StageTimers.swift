import Dispatch

/// The timers of one staged pipeline.
///
/// A timer's work does not call its node: it sends a timer event into the pipeline's intake, so
/// that timer fires are serialised with elements, flushes and finish, in one order. Every
/// outstanding timer is registered here, so that cancelling the pipeline cancels them all (and
/// the schedulers let go of the nodes at once).
///
/// They also carry the quality of service of the pipeline's own queues (``qos(of:)`` of its
/// target): the timer queue of each stage that kept the default scheduler, and the stage queue.
@usableFromInline
final class StageTimers: Sendable {
    struct State {
        /// Sends a fire into the intake; set once the intake exists.
        var sendFire: (@Sendable (TimerFire) -> Void)?
        var armed: [Int: ScheduledWork] = [:]
        var nextID = 0
        var isCancelled = false
        /// The queues made for stages that kept the default scheduler (read by tests).
        var defaultTimerQueues: [DispatchQueue] = []
    }

    let state = Locked(State())
    /// The quality of service of the pipeline's target.
    let targetQoS: DispatchQoS

    /// The timers of a pipeline that delivers to `target`.
    /// The gate of a flow-controlled pipeline (``BufferPolicy/waiting(capacity:)``,
    /// ``BufferPolicy/watermarks(low:high:)``): its time-based stages count what they keep there.
    @usableFromInline let gate: DrainGate?

    @usableFromInline
    init(deliveringTo target: any DeliveryTarget, gate: DrainGate? = nil) {
        self.targetQoS = qos(of: target)
        self.gate = gate
    }

    /// Where the pipeline's stages continue when a burst keeps its intake busy: the library's
    /// stage queue at ``targetQoS``.
    @usableFromInline
    var stageQueue: DispatchQueue { .stageQueue(targetQoS) }

    /// The scheduler of a time-based stage: `scheduler` itself, unless it is the default
    /// (``QueueScheduler/stageTimers``), which becomes a new serial queue of the stage's own at
    /// ``targetQoS``.
    func scheduler(for scheduler: any DeliveryScheduler) -> any DeliveryScheduler {
        guard let queueScheduler = scheduler as? QueueScheduler, queueScheduler.isStageDefault else {
            return scheduler
        }
        let queue = DispatchQueue(label: "Receptionist.stageTimers", qos: targetQoS)
        state.withLock { $0.defaultTimerQueues.append(queue) }
        return QueueScheduler(queue)
    }

    /// Test hook: the timer queues made for the stages that kept the default scheduler, in the
    /// order the stages were built (from the delivery end backwards).
    package var defaultTimerQueues: [DispatchQueue] {
        state.withLock { $0.defaultTimerQueues }
    }

    /// Connects the timers to the intake; called once, right after the intake is created.
    @usableFromInline
    func connect(_ sendFire: @escaping @Sendable (TimerFire) -> Void) {
        state.withLock { $0.sendFire = sendFire }
    }

    /// Arms a timer that sends a fire for `node` into the intake at `deadline` on `scheduler`.
    ///
    /// - Returns: the timer's identifier, which the fire carries, for ``disarm(_:)``; `nil` once
    ///   the pipeline was cancelled.
    func arm(
        _ node: any TimedStageNode,
        at deadline: SchedulerInstant,
        on scheduler: any DeliveryScheduler
    ) -> Int? {
        let id: Int? = state.withLock { state in
            guard !state.isCancelled else { return nil }
            defer { state.nextID += 1 }
            return state.nextID
        }
        guard let id else { return nil }
        // Submitted outside the lock: a scheduler takes locks of its own.
        let work = scheduler.submit(at: deadline) { [weak self] in
            self?.fire(id, TimerFire(node: node, id: id))
        }
        let keep = state.withLock { state in
            guard !state.isCancelled else { return false }
            state.armed[id] = work
            return true
        }
        if !keep { work.cancel() }
        return id
    }

    /// Cancels the timer `id` if it has not fired.
    func disarm(_ id: Int) {
        let work = state.withLock { $0.armed.removeValue(forKey: id) }
        work?.cancel()
    }

    /// Cancels every timer, now and in the future.
    @usableFromInline
    func cancelAll() {
        let works = state.withLock { state in
            state.isCancelled = true
            state.sendFire = nil
            defer { state.armed = [:] }
            return state.armed.values
        }
        for work in works { work.cancel() }
    }

    private func fire(_ id: Int, _ fire: TimerFire) {
        let sendFire = state.withLock { state -> (@Sendable (TimerFire) -> Void)? in
            // A fire racing with arm(): the work may run before arm() registered it.
            state.armed[id] = nil
            return state.sendFire
        }
        sendFire?(fire)
    }
}

/// A timer event travelling through a pipeline's intake.
@usableFromInline
struct TimerFire: Sendable {
    @usableFromInline let node: any TimedStageNode
    /// The timer's identifier (``StageTimers/arm(_:at:on:)``).
    @usableFromInline let id: Int
}
