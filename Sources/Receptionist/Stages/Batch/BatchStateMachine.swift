/// The decisions of a batching stage, as a plain value: elements, timer fires, flush in;
/// batches to hand on and a timer action out.
///
/// A batch opens with its first element and closes when it holds `count` elements or when
/// `interval` has passed since its first element, whichever comes first. The batch's window is
/// `[first, first + interval)`: an element arriving at `first + interval` or later starts the
/// next batch, even if the timer has not fired yet. Empty batches are never handed on.
@usableFromInline
struct BatchStateMachine<Element>: Sendable where Element: Sendable {
    @usableFromInline
    struct Action: Sendable {
        /// Batches to hand on, in order (in practice at most one: a batch closed late leaves a
        /// one-element batch, which is full only with `count` 1, when no batch stays open).
        @usableFromInline var batches: [[Element]] = []
        @usableFromInline var timer: TimerAction = .none

        @inlinable
        init(batches: [[Element]] = [], timer: TimerAction = .none) {
            self.batches = batches
            self.timer = timer
        }
    }

    @usableFromInline let count: Int?
    @usableFromInline let interval: Duration?
    @usableFromInline var batch: [Element] = []
    /// When the open batch closes by time; `nil` without an interval or without an open batch.
    @usableFromInline var deadline: SchedulerInstant?
    @usableFromInline var generation = 0

    /// - Precondition: `count` ≥ 1 and `interval` > 0 where given, and at least one is given
    ///   (checked, with messages, by the operators that create the stage).
    @inlinable
    init(count: Int?, interval: Duration?) {
        self.count = count
        self.interval = interval
    }

    @inlinable
    var pendingCount: Int { batch.count }

    @inlinable
    mutating func received(_ element: Element, at now: SchedulerInstant) -> Action {
        var action = Action()
        let armedBefore = deadline != nil
        if let deadline, now >= deadline {
            // The timer is late: the open batch's window has passed.
            action.batches.append(takeBatch())
        }
        batch.append(element)
        if batch.count == 1, let interval {
            deadline = now + interval
            generation += 1
        }
        if let count, batch.count >= count {
            action.batches.append(takeBatch())
        }
        if let deadline {
            if !armedBefore || batch.count == 1 { action.timer = .arm(at: deadline, generation: generation) }
        } else if armedBefore {
            action.timer = .disarm
        }
        return action
    }

    @inlinable
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, deadline != nil else { return Action() }
        return Action(batches: [takeBatch()], timer: .none)
    }

    /// Hands on the open batch, if any.
    @inlinable
    mutating func flush() -> Action {
        guard !batch.isEmpty else { return Action() }
        let armed = deadline != nil
        return Action(batches: [takeBatch()], timer: armed ? .disarm : .none)
    }

    @inlinable
    mutating func takeBatch() -> [Element] {
        deadline = nil
        defer { batch = [] }
        return batch
    }
}
