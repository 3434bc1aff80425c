/// Where an observation puts its changes: the delivery receptionist (no stages) or a pipeline's
/// intake.
///
/// ``accept(_:)`` is called under the observed box's lock and must not run user code; when its
/// outcome asks for a drain, the box calls ``submitDrain()`` after releasing the lock.
@usableFromInline
protocol ChangeSink<Change>: Sendable {
    associatedtype Change: Sendable
    func accept(_ change: consuming Change) -> ObserverOutcome
    /// Like ``accept(_:)``, for a sink that may fold the change into one still waiting: it then
    /// calls `fold` on the waiting change, in place, and never `make`. Only for changes that
    /// follow the previous one accepted (what `fold` lets go of is released under the lock).
    func accept(_ make: @Sendable () -> Change, foldingWith fold: @Sendable (inout Change) -> Void) -> ObserverOutcome
    func submitDrain()
    func flush()
    func finish()
    func cancel()
    /// Neither finishing nor ended.
    var isActive: Bool { get }
    var isCancelled: Bool { get }
    var isFinished: Bool { get }
    var statistics: ReceptionistStatistics { get }
}

extension ReceptionistCore: ChangeSink {
    @inlinable
    func accept(_ change: consuming Element) -> ObserverOutcome {
        let outcome = enqueue(change)
        if coalesces || dropsNewest || outcome.action == .rejected {
            // Released here, under the box's lock, which is safe because none of it can be a last
            // reference (this sink is attached straight to the box): what a merge lets go of is
            // the previous write's new value, which is this write's old value, held by the writer
            // until after the lock; a change dropped by `dropNewest` or not accepted is this
            // write's own, whose values are that old value and the box's new one; the object and
            // key path are held by the writer and the observer. Returning it would box it into
            // `any Sendable`, an allocation per write. (An element `dropOldest` evicts is older
            // and may hold the last reference to its values: it is returned.)
            return ObserverOutcome(needsDrain: outcome.needsDrain)
        }
        return ObserverOutcome(needsDrain: outcome.needsDrain, evicted: outcome.evicted)
    }

    @inlinable
    func accept(_ make: @Sendable () -> Element, foldingWith fold: @Sendable (inout Element) -> Void) -> ObserverOutcome
    {
        guard coalesces else { return accept(make()) }
        // See `accept(_:)` on why what the fold lets go of, and a change that was not accepted,
        // may be released here, under the box's lock and the receptionist's: none of it is a
        // last reference.
        let (action, notKept) = state.withLock { $0.enqueue(making: make, foldingWith: fold) }
        _ = notKept
        return ObserverOutcome(needsDrain: action == .submitDrain)
    }

    @usableFromInline
    func flush() {}

    @usableFromInline
    var isActive: Bool { lifecycle == .active }
}

extension StagedPipeline: ChangeSink {
    @inlinable
    func accept(_ change: consuming Input) -> ObserverOutcome {
        let outcome = intake.enqueue(.element(change))
        return ObserverOutcome(needsDrain: outcome.needsDrain, evicted: outcome.evicted)
    }

    @inlinable
    func accept(_ make: @Sendable () -> Input, foldingWith fold: @Sendable (inout Input) -> Void) -> ObserverOutcome {
        accept(make())
    }

    @inlinable
    func submitDrain() { intake.submitDrain() }
}
