/// The decisions of a throttling stage, as a plain value.
///
/// Every output opens a *window* of `interval`. An element arriving when no window is open is
/// handed on at once (the leading edge) and opens one. Elements arriving inside a window are
/// held: the latest (`latest == true`) or the first. When the window ends, the held element, if
/// any, is handed on (the trailing edge) and opens the next window; if none is held, the stage
/// becomes idle. So outputs are at least `interval` apart, the first element of a burst is
/// delivered at once and the last state (with `latest`) at most `interval` later.
@usableFromInline
struct ThrottleStateMachine<Input: Sendable>: TimedStateMachine {
    @usableFromInline
    enum State: Sendable {
        case idle
        case window(end: SchedulerInstant, held: Input?)
    }

    @usableFromInline let interval: Duration
    @usableFromInline let latest: Bool
    @usableFromInline var state = State.idle
    @usableFromInline var generation = 0

    @usableFromInline
    init(interval: Duration, latest: Bool) {
        self.interval = interval
        self.latest = latest
    }

    @usableFromInline
    typealias Action = TimedStageAction<Input, Input>

    @inlinable
    mutating func received(_ element: Input, at now: SchedulerInstant) -> Action {
        var action = Action()
        if case .window(let end, _) = state, now >= end {
            // The timer is late: end the window first.
            action = windowEnded(at: now)
        }
        switch state {
        case .idle:
            action.outputs.append(element)
            action.timer = openWindow(at: now)
        case .window(let end, let held):
            // Without `latest`, an element arriving after the held one is dropped: the caller
            // still holds it and releases it after the lock.
            if latest || held == nil {
                state = .window(end: end, held: element)
                action.released = held
            }
        }
        return action
    }

    @usableFromInline
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, case .window = state else { return Action() }
        return windowEnded(at: now)
    }

    /// Hands on the held element now; that output opens a new window.
    @usableFromInline
    mutating func flush(at now: SchedulerInstant) -> Action {
        guard case .window(_, .some(let held)) = state else { return Action() }
        return Action(outputs: [held], timer: openWindow(at: now))
    }

    /// The input ended: hands on the held element, if any.
    @usableFromInline
    mutating func finish(at now: SchedulerInstant) -> Action {
        guard case .window(_, let held) = state else { return Action() }
        state = .idle
        return Action(outputs: held.map { [$0] } ?? [], timer: .disarm)
    }

    @usableFromInline
    mutating func windowEnded(at now: SchedulerInstant) -> Action {
        guard case .window(_, let held) = state else {
            preconditionFailure("Internal inconsistency: throttle window ended while \(state)")
        }
        if let held {
            return Action(outputs: [held], timer: openWindow(at: now))
        }
        state = .idle
        return Action(timer: .disarm)
    }

    @usableFromInline
    mutating func openWindow(at now: SchedulerInstant) -> TimerAction {
        generation += 1
        state = .window(end: now + interval, held: nil)
        return .arm(at: now + interval, generation: generation)
    }
}
