/// The decisions of a throttling stage, as a plain value.
///
/// Every output opens a *window* of `interval`. An element arriving when no window is open is
/// handed on at once (the leading edge, with `leading`) and opens one; without `leading` it
/// opens the window and is held. Elements arriving inside a window are held (`trailing`: the
/// latest, the first, or none). When the window ends, the held element, if any, is handed on
/// (the trailing edge) and opens the next window; if none is held, the stage becomes idle. So
/// outputs are at least `interval` apart.
@usableFromInline
struct ThrottleStateMachine<Input: Sendable>: TimedStateMachine {
    @usableFromInline
    enum State: Sendable {
        case idle
        case window(end: SchedulerInstant, held: Input?)
    }

    /// What a window holds for its trailing edge.
    @usableFromInline
    enum Trailing: Sendable {
        /// Nothing: elements inside a window are dropped.
        case none
        /// The first element that arrived in the window.
        case first
        /// The latest element that arrived in the window.
        case latest
    }

    @usableFromInline let interval: Duration
    @usableFromInline let leading: Bool
    @usableFromInline let trailing: Trailing
    @usableFromInline var state = State.idle
    /// The value held for the end of the window, if any.
    @inlinable
    var heldCount: Int {
        if case .window(_, .some) = state { return 1 }
        return 0
    }
    @usableFromInline var generation = 0

    /// - Precondition: `leading` or a trailing edge (checked, with a message, by the operator).
    @usableFromInline
    init(interval: Duration, leading: Bool, trailing: Trailing) {
        self.interval = interval.clampedForStages
        self.leading = leading
        self.trailing = trailing
    }

    /// The leading edge, and a trailing edge with the latest (`latest`) or the first element.
    @usableFromInline
    init(interval: Duration, latest: Bool) {
        self.init(interval: interval, leading: true, trailing: latest ? .latest : .first)
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
        case .idle where leading:
            action.outputs.append(element)
            action.timer = openWindow(at: now)
        case .idle:
            action.timer = openWindow(at: now)
            state = .window(end: now + interval, held: element)
        case .window(let end, let held):
            // An element the window does not keep (any, without a trailing edge; a later one,
            // with the first) is dropped: the caller still holds it and releases it after the lock.
            switch trailing {
            case .none:
                break
            case .first where held != nil:
                break
            case .first, .latest:
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
