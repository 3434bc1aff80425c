/// The decisions of a throttling stage, as a plain value.
///
/// Every output opens a *window* of `interval`. An element arriving when no window is open is
/// handed on at once (the leading edge) and opens one. Elements arriving inside a window are
/// held: the latest (`latest == true`) or the first. When the window ends, the held element, if
/// any, is handed on (the trailing edge) and opens the next window; if none is held, the stage
/// becomes idle. So outputs are at least `interval` apart, the first element of a burst is
/// delivered at once and the last state (with `latest`) at most `interval` later.
@usableFromInline
struct ThrottleStateMachine<Element>: Sendable where Element: Sendable {
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

    @usableFromInline
    enum State: Sendable {
        case idle
        case window(end: SchedulerInstant, held: Element?)
    }

    @usableFromInline let interval: Duration
    @usableFromInline let latest: Bool
    @usableFromInline var state = State.idle
    @usableFromInline var generation = 0

    @inlinable
    init(interval: Duration, latest: Bool) {
        self.interval = interval
        self.latest = latest
    }

    @inlinable
    var isHolding: Bool {
        if case .window(_, .some) = state { return true }
        return false
    }

    @inlinable
    mutating func received(_ element: Element, at now: SchedulerInstant) -> Action {
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
            state = .window(end: end, held: latest ? element : (held ?? element))
            if latest { action.replaced = held }
        }
        return action
    }

    @inlinable
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, case .window = state else { return Action() }
        return windowEnded(at: now)
    }

    /// Hands on the held element now; that output opens a new window.
    @inlinable
    mutating func flush(at now: SchedulerInstant) -> Action {
        guard case .window(_, .some(let held)) = state else { return Action() }
        return Action(outputs: [held], timer: openWindow(at: now))
    }

    /// The input ended: hands on the held element, if any.
    @inlinable
    mutating func finish() -> Action {
        guard case .window(_, let held) = state else { return Action() }
        state = .idle
        return Action(outputs: held.map { [$0] } ?? [], timer: .disarm)
    }

    @inlinable
    mutating func windowEnded(at now: SchedulerInstant) -> Action {
        guard case .window(_, let held) = state else {
            preconditionFailure("Internal inconsistency: throttle window ended while \(state)")
        }
        if let held {
            return Action(outputs: [held], timer: openWindow(at: now))
        }
        state = .idle
        return Action(outputs: [], timer: .disarm)
    }

    @inlinable
    mutating func openWindow(at now: SchedulerInstant) -> TimerAction {
        generation += 1
        state = .window(end: now + interval, held: nil)
        return .arm(at: now + interval, generation: generation)
    }
}
