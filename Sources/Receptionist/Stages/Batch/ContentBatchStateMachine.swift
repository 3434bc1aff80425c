/// The decisions of a batching stage that also splits by content (`batch(while:)`,
/// `batch(by:)`), as a plain value: a ``BatchStateMachine`` for the count and time limits, and
/// the key of the open batch's last element.
///
/// The user's closures never run here (the machine runs under the stage's lock): the stage works
/// out each element's key, and whether it belongs with the open batch, before it calls
/// ``received(_:key:belongs:at:)``. An element that does not belong hands on the open batch and
/// opens the next one; one that belongs joins the open batch, which may then close by count (or
/// have closed by time already, if its timer is late), exactly as in ``BatchStateMachine``. With
/// no batch open, an element opens one whatever `belongs` says.
///
/// Invariant: ``openKey`` is `nil` exactly when no batch is open. The key the machine lets go of
/// comes back in the action's `released`, to be released after the lock (its deinitialiser may be
/// user code).
@usableFromInline
struct ContentBatchStateMachine<Element: Sendable, Key: Sendable>: Sendable {
    @usableFromInline var batching: BatchStateMachine<Element>
    /// The key of the open batch's last element; `nil` when no batch is open.
    @usableFromInline var openKey: Key?

    @usableFromInline
    typealias Action = TimedStageAction<Key, [Element]>

    /// - Precondition: `count` ≥ 1 and `interval` > 0 where given (checked, with messages, by
    ///   the operators that create the stage). Neither is needed: without both, only the content
    ///   (and `flush()`, `finish()`) closes a batch.
    @usableFromInline
    init(count: Int?, interval: Duration?) {
        batching = BatchStateMachine(count: count, interval: interval)
    }

    /// `element`, whose key is `key`, arrived at `now`; `belongs` tells whether it belongs with
    /// the open batch (ignored when no batch is open).
    @inlinable
    mutating func received(_ element: Element, key: Key, belongs: Bool, at now: SchedulerInstant) -> Action {
        let closed = belongs ? nil : batching.flush(at: now)
        let added = batching.received(element, at: now)
        var action = Action(outputs: added.outputs, timer: added.timer, released: openKey.take())
        if let closed {
            if !closed.outputs.isEmpty { action.outputs = closed.outputs + action.outputs }
            // Flushing disarms the closed batch's timer; the new batch may arm its own.
            if action.timer == .none { action.timer = closed.timer }
        }
        if batching.isOpen { openKey = key }
        return action
    }

    /// The timer armed with `generation` fired at `now`: the open batch's window ended.
    @usableFromInline
    mutating func timerFired(generation: Int, at now: SchedulerInstant) -> Action {
        let fired = batching.timerFired(generation: generation, at: now)
        guard !fired.outputs.isEmpty else { return Action() }
        return Action(outputs: fired.outputs, timer: fired.timer, released: openKey.take())
    }

    /// Hands on the open batch, if any.
    @usableFromInline
    mutating func flush(at now: SchedulerInstant) -> Action {
        let flushed = batching.flush(at: now)
        return Action(outputs: flushed.outputs, timer: flushed.timer, released: openKey.take())
    }

    @usableFromInline
    mutating func finish(at now: SchedulerInstant) -> Action {
        flush(at: now)
    }
}

extension BatchStateMachine {
    /// Whether a batch is open.
    @inlinable
    var isOpen: Bool {
        if case .collecting = state { return true }
        return false
    }
}
