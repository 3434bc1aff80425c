/// The decisions of a debouncing stage, as a plain value.
///
/// An element is handed on once `interval` has passed without a newer element; each newer
/// element replaces it and restarts the wait. To keep a flood cheap, the stage does not re-arm
/// its timer per element: one timer is armed; when it fires before the current deadline (newer
/// elements moved it), it is armed again for that deadline.
@usableFromInline
struct DebounceStateMachine<Element>: Sendable where Element: Sendable {
    @usableFromInline
    struct Action: Sendable {
        @usableFromInline var outputs: [Element] = []
        @usableFromInline var timer: TimerAction = .none
        /// An element the stage let go of without handing it on, carried out of the lock so
        /// that it is released (its `deinit` may be user code) after the lock is released.
        @usableFromInline var replaced: Element?

        @inlinable
        init(outputs: [Element] = [], timer: TimerAction = .none, replaced: Element? = nil) {
            self.outputs = outputs
            self.timer = timer
            self.replaced = replaced
        }
    }

    @usableFromInline let interval: Duration
    @usableFromInline var pending: Element?
    /// When `pending` is due.
    @usableFromInline var deadline: SchedulerInstant?
    /// Whether a timer is armed (for a deadline at or before `deadline`).
    @usableFromInline var isTimerArmed = false
    @usableFromInline var generation = 0

    @inlinable
    init(interval: Duration) {
        self.interval = interval
    }

    @inlinable
    var isHolding: Bool { pending != nil }

    @inlinable
    mutating func received(_ element: Element, at now: SchedulerInstant) -> Action {
        var action = Action()
        if let pending, let deadline, now >= deadline {
            // The timer is late: `pending` was due before this element arrived.
            action.outputs.append(pending)
        }
        if action.outputs.isEmpty { action.replaced = pending }
        pending = element
        deadline = now + interval
        if !isTimerArmed {
            action.timer = arm()
        }
        return action
    }

    @inlinable
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, isTimerArmed else { return Action() }
        isTimerArmed = false
        guard let element = pending, let deadline else { return Action() }
        if now >= deadline {
            clear()
            return Action(outputs: [element], timer: .none)
        }
        return Action(outputs: [], timer: arm())
    }

    /// Hands on the pending element now (also used when the input ends).
    @inlinable
    mutating func flush() -> Action {
        guard let element = pending else { return Action() }
        clear()
        let timer: TimerAction = isTimerArmed ? .disarm : .none
        isTimerArmed = false
        return Action(outputs: [element], timer: timer)
    }

    @inlinable
    mutating func arm() -> TimerAction {
        generation += 1
        isTimerArmed = true
        return .arm(at: deadline!, generation: generation)
    }

    @inlinable
    mutating func clear() {
        pending = nil
        deadline = nil
    }
}
