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
    /// When the open window ends; `nil` while the stage is idle (no window open).
    @usableFromInline var windowEnd: SchedulerInstant?
    /// The element held for the end of the window, if any (only while a window is open).
    ///
    /// A field of its own, not a payload of the window's case: an element nested in an enum
    /// payload is copied whenever the case is read or rebuilt, and for a large element type
    /// (an ``ObservedChange`` of a multi-field value) every copy goes through the type's value
    /// witnesses at run time (the "writers" section of the benchmarks).
    @usableFromInline var held: Input?
    /// The value held for the end of the window, if any.
    @inlinable
    var heldCount: Int { held == nil ? 0 : 1 }
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
    mutating func received(_ element: consuming Input, at now: SchedulerInstant) -> Action {
        var action = Action()
        if let end = windowEnd, now >= end {
            // The timer is late: end the window first.
            action = windowEnded(at: now)
        }
        guard windowEnd != nil else {
            action.timer = openWindow(at: now)
            if leading {
                action.outputs.append(element)
            } else {
                held = element
            }
            return action
        }
        // An element the window does not keep (any, without a trailing edge; a later one, with
        // the first) is released by the stage after its lock, as the one it replaces.
        switch trailing {
        case .none,
            .first where held != nil:
            action.released = element
        case .first, .latest:
            action.released = held.take()
            held = element
        }
        return action
    }

    @usableFromInline
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, windowEnd != nil else { return Action() }
        return windowEnded(at: now)
    }

    /// Hands on the held element now; that output opens a new window.
    @usableFromInline
    mutating func flush(at now: SchedulerInstant) -> Action {
        guard windowEnd != nil, let element = held.take() else { return Action() }
        return Action(outputs: [element], timer: openWindow(at: now))
    }

    /// The input ended: hands on the held element, if any.
    @usableFromInline
    mutating func finish(at now: SchedulerInstant) -> Action {
        guard windowEnd != nil else { return Action() }
        windowEnd = nil
        return Action(outputs: held.take().map { [$0] } ?? [], timer: .disarm)
    }

    @inlinable
    mutating func windowEnded(at now: SchedulerInstant) -> Action {
        precondition(windowEnd != nil, "Internal inconsistency: throttle window ended while idle")
        if let element = held.take() {
            return Action(outputs: [element], timer: openWindow(at: now))
        }
        windowEnd = nil
        return Action(timer: .disarm)
    }

    /// Opens a window at `now`, holding nothing.
    @inlinable
    mutating func openWindow(at now: SchedulerInstant) -> TimerAction {
        generation += 1
        windowEnd = now + interval
        return .arm(at: now + interval, generation: generation)
    }
}
