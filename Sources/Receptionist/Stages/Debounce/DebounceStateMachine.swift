/// The decisions of a debouncing stage, as a plain value.
///
/// An element is handed on once `interval` has passed without a newer element; each newer
/// element replaces it and restarts the wait. With `maxWait`, a pending element is handed on at
/// the latest `maxWait` after the first element of its burst arrived, even if the input never
/// goes quiet (lodash's `maxWait`); the next element then starts a new burst.
///
/// To keep a flood cheap, the stage does not re-arm its timer per element: while an element
/// waits, one timer is armed; when it fires before the current due time (newer elements moved
/// it), it is armed again for that time.
@usableFromInline
struct DebounceStateMachine<Input: Sendable>: TimedStateMachine {
    @usableFromInline
    enum State: Sendable {
        case idle
        /// `pending` is handed on at `due`; a timer is armed (for `due` or earlier). `latestBy`
        /// bounds `due` with `maxWait`: the burst's first arrival plus `maxWait`.
        case waiting(pending: Input, due: SchedulerInstant, latestBy: SchedulerInstant?)
    }

    @usableFromInline let interval: Duration
    @usableFromInline let maxWait: Duration?
    @usableFromInline var state = State.idle
    /// The pending value, if any.
    @inlinable
    var heldCount: Int {
        if case .waiting = state { return 1 }
        return 0
    }
    @usableFromInline var generation = 0

    /// - Precondition: `interval` > 0 and, where given, `maxWait` ≥ `interval` (checked, with
    ///   messages, by the operator).
    @usableFromInline
    init(interval: Duration, maxWait: Duration? = nil) {
        self.interval = interval.clampedForStages
        self.maxWait = maxWait?.clampedForStages
    }

    @usableFromInline
    typealias Action = TimedStageAction<Input, Input>

    @inlinable
    mutating func received(_ element: Input, at now: SchedulerInstant) -> Action {
        switch state {
        case .idle:
            let due = startBurst(with: element, at: now)
            return Action(timer: arm(at: due))
        case .waiting(let pending, let due, let latestBy):
            // The armed timer stays: when it fires, it finds the new due time and re-arms.
            if now >= due {
                // The timer is late: `pending` was due before this element arrived.
                _ = startBurst(with: element, at: now)
                return Action(outputs: [pending])
            }
            state = .waiting(pending: element, due: Self.due(now + interval, latestBy), latestBy: latestBy)
            return Action(released: pending)
        }
    }

    @usableFromInline
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, case .waiting(let pending, let due, _) = state else { return Action() }
        if now >= due {
            state = .idle
            return Action(outputs: [pending])
        }
        return Action(timer: arm(at: due))
    }

    /// Hands on the pending element now.
    @usableFromInline
    mutating func flush(at now: SchedulerInstant) -> Action {
        guard case .waiting(let pending, _, _) = state else { return Action() }
        state = .idle
        return Action(outputs: [pending], timer: .disarm)
    }

    @usableFromInline
    mutating func finish(at now: SchedulerInstant) -> Action {
        flush(at: now)
    }

    /// `element` starts a burst at `now`: returns when it is due.
    @usableFromInline
    mutating func startBurst(with element: Input, at now: SchedulerInstant) -> SchedulerInstant {
        let latestBy = maxWait.map { now + $0 }
        let due = Self.due(now + interval, latestBy)
        state = .waiting(pending: element, due: due, latestBy: latestBy)
        return due
    }

    @usableFromInline
    static func due(_ quiet: SchedulerInstant, _ latestBy: SchedulerInstant?) -> SchedulerInstant {
        latestBy.map { min(quiet, $0) } ?? quiet
    }

    @usableFromInline
    mutating func arm(at deadline: SchedulerInstant) -> TimerAction {
        generation += 1
        return .arm(at: deadline, generation: generation)
    }
}
