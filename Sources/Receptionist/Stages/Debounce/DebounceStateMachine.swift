/// The decisions of a debouncing stage, as a plain value.
///
/// An element is handed on once `interval` has passed without a newer element; each newer
/// element replaces it and restarts the wait. To keep a flood cheap, the stage does not re-arm
/// its timer per element: while an element waits, one timer is armed; when it fires before the
/// current deadline (newer elements moved it), it is armed again for that deadline.
@usableFromInline
struct DebounceStateMachine<Input: Sendable>: TimedStateMachine {
    @usableFromInline
    enum State: Sendable {
        case idle
        /// `pending` is handed on at `deadline`; a timer is armed (for `deadline` or earlier).
        case waiting(pending: Input, deadline: SchedulerInstant)
    }

    @usableFromInline let interval: Duration
    @usableFromInline var state = State.idle
    @usableFromInline var generation = 0

    @usableFromInline
    init(interval: Duration) {
        self.interval = interval
    }

    @usableFromInline
    typealias Action = TimedStageAction<Input, Input>

    @inlinable
    mutating func received(_ element: Input, at now: SchedulerInstant) -> Action {
        switch state {
        case .idle:
            state = .waiting(pending: element, deadline: now + interval)
            return Action(timer: arm(at: now + interval))
        case .waiting(let pending, let deadline):
            // The armed timer stays: when it fires, it finds the new deadline and re-arms.
            state = .waiting(pending: element, deadline: now + interval)
            if now >= deadline {
                // The timer is late: `pending` was due before this element arrived.
                return Action(outputs: [pending])
            }
            return Action(released: pending)
        }
    }

    @usableFromInline
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, case .waiting(let pending, let deadline) = state else { return Action() }
        if now >= deadline {
            state = .idle
            return Action(outputs: [pending])
        }
        return Action(timer: arm(at: deadline))
    }

    /// Hands on the pending element now.
    @usableFromInline
    mutating func flush(at now: SchedulerInstant) -> Action {
        guard case .waiting(let pending, _) = state else { return Action() }
        state = .idle
        return Action(outputs: [pending], timer: .disarm)
    }

    @usableFromInline
    mutating func finish(at now: SchedulerInstant) -> Action {
        flush(at: now)
    }

    @usableFromInline
    mutating func arm(at deadline: SchedulerInstant) -> TimerAction {
        generation += 1
        return .arm(at: deadline, generation: generation)
    }
}
