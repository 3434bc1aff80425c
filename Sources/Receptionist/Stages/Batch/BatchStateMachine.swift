/// The decisions of a batching stage, as a plain value.
///
/// A batch opens with its first element and closes when it holds `count` elements or when
/// `interval` has passed since its first element, whichever comes first. The batch's window is
/// `[first, first + interval)`: an element arriving at `first + interval` or later starts the
/// next batch, even if the timer has not fired yet. Empty batches are never handed on.
@usableFromInline
struct BatchStateMachine<Input: Sendable>: TimedStateMachine {

    @usableFromInline
    enum State: Sendable {
        /// No batch is open.
        case idle
        /// A batch is open; it closes by time at `closesAt` (`nil` without an interval).
        case collecting([Input], closesAt: SchedulerInstant?)
    }

    @usableFromInline let count: Int?
    @usableFromInline let interval: Duration?
    @usableFromInline var state = State.idle
    /// Numbers the batches that close by time, so that a late fire for a closed batch is ignored.
    @usableFromInline var generation = 0

    /// - Precondition: `count` ≥ 1 and `interval` > 0 where given, and at least one is given
    ///   (checked, with messages, by the operators that create the stage).
    @usableFromInline
    init(count: Int?, interval: Duration?) {
        self.count = count
        self.interval = interval?.clampedForStages
    }

    @usableFromInline
    typealias Action = TimedStageAction<Input, [Input]>

    /// The open batch's elements.
    @inlinable
    var heldCount: Int {
        if case .collecting(let batch, _) = state { return batch.count }
        return 0
    }

    @inlinable
    mutating func received(_ element: consuming Input, at now: SchedulerInstant) -> Action {
        var action = Action()
        // Moved out of `state`, so that the open batch's storage has one owner and grows in
        // place (reading an enum payload would retain it, and appending would then copy it).
        var current = State.idle
        swap(&current, &state)
        var closesAt: SchedulerInstant?
        var batch: [Input]
        let wasArmed: Bool
        switch consume current {
        case .idle:
            batch = []
            wasArmed = false
        case .collecting(let open, let openClosesAt):
            wasArmed = openClosesAt != nil
            if let openClosesAt, now >= openClosesAt {
                // The timer is late: the open batch's window has passed.
                action.outputs.append(open)
                batch = []
            } else {
                batch = open
                closesAt = openClosesAt
            }
        }
        batch.append(element)
        let opened = batch.count == 1
        if opened, let interval {
            generation += 1
            closesAt = now + interval
        }
        if let count, batch.count >= count {
            action.outputs.append(batch)
            closesAt = nil
        } else {
            state = .collecting(batch, closesAt: closesAt)
        }
        if let closesAt {
            if !wasArmed || opened { action.timer = .arm(at: closesAt, generation: generation) }
        } else if wasArmed {
            action.timer = .disarm
        }
        return action
    }

    @usableFromInline
    mutating func timerFired(generation fired: Int, at now: SchedulerInstant) -> Action {
        guard fired == generation, case .collecting(let batch, .some) = state else { return Action() }
        state = .idle
        return Action(outputs: [batch])
    }

    /// Hands on the open batch, if any.
    @usableFromInline
    mutating func flush(at now: SchedulerInstant) -> Action {
        guard case .collecting(let batch, let closesAt) = state else { return Action() }
        state = .idle
        return Action(outputs: [batch], timer: closesAt == nil ? .none : .disarm)
    }

    @usableFromInline
    mutating func finish(at now: SchedulerInstant) -> Action {
        flush(at: now)
    }
}
