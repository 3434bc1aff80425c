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
    @usableFromInline let interval: Duration
    @usableFromInline let maxWait: Duration?
    /// The element waiting for the quiet time, handed on at ``due``; a timer is armed (for `due`
    /// or earlier) while it waits. `nil`: idle.
    ///
    /// Fields of their own, not the payload of a waiting case: an element nested in an enum
    /// payload is copied whenever the case is read or rebuilt (for a large element type, through
    /// its value witnesses at run time; see ``ThrottleStateMachine/held``).
    @usableFromInline var pending: Input?
    /// When ``pending`` is due.
    @usableFromInline var due = SchedulerInstant.zero
    /// The latest `due` may be with `maxWait`: the burst's first arrival plus `maxWait`.
    @usableFromInline var latestBy: SchedulerInstant?
    /// The pending value, if any.
    @inlinable
    var heldCount: Int { pending == nil ? 0 : 1 }
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
    mutating func received(_ element: consuming Input, at now: SchedulerInstant) -> Action {
        guard pending != nil else {
            return Action(timer: arm(at: startBurst(with: element, at: now)))
        }
        // The armed timer stays: when it fires, it finds the new due time and re-arms.
        if now >= due {
            // The timer is late: what was pending was due before this element arrived.
            let late = pending.take()!
            _ = startBurst(with: element, at: now)
            return Action(outputs: [late])
        }
        due = Self.due(now + interval, latestBy)
        let replaced = pending.take()
        pending = element
        return Action(released: replaced)
    }

    @usableFromInline
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, pending != nil else { return Action() }
        if now >= due {
            return Action(outputs: [pending.take()!])
        }
        return Action(timer: arm(at: due))
    }

    /// Hands on the pending element now.
    @usableFromInline
    mutating func flush(at now: SchedulerInstant) -> Action {
        guard let element = pending.take() else { return Action() }
        return Action(outputs: [element], timer: .disarm)
    }

    @usableFromInline
    mutating func finish(at now: SchedulerInstant) -> Action {
        flush(at: now)
    }

    /// `element` starts a burst at `now`: returns when it is due.
    @inlinable
    mutating func startBurst(with element: consuming Input, at now: SchedulerInstant) -> SchedulerInstant {
        latestBy = maxWait.map { now + $0 }
        due = Self.due(now + interval, latestBy)
        pending = element
        return due
    }

    @inlinable
    static func due(_ quiet: SchedulerInstant, _ latestBy: SchedulerInstant?) -> SchedulerInstant {
        latestBy.map { min(quiet, $0) } ?? quiet
    }

    @inlinable
    mutating func arm(at deadline: SchedulerInstant) -> TimerAction {
        generation += 1
        return .arm(at: deadline, generation: generation)
    }
}
