/// A delivery engine's machine behind its model's lock (see ``ModelRegistry``).
///
/// While the machine has a drain scheduled (changes waiting, or being delivered), its cell keeps
/// the model alive: a change is delivered with its model, yet is buffered without a reference to
/// it. The reference is taken by the write that made the machine busy and let go of, after the
/// lock, by whichever step leaves the machine idle: one retain and release per burst, not per
/// change, and an observation without pending changes does not keep its model alive.
@usableFromInline
struct SharedMachine<Element: Sendable>: MachineGuard {
    @usableFromInline let registry: ModelRegistry
    @usableFromInline let cell: MachineCell<Element>

    @usableFromInline
    init(registry: ModelRegistry, cell: MachineCell<Element>) {
        self.registry = registry
        self.cell = cell
    }

    @inlinable
    func withLock<Result: Sendable>(_ body: (inout ReceptionistStateMachine<Element>) -> Result) -> Result {
        registry.state.withLockThenRelease { _ in
            let result = body(&cell.machine)
            return (result, released: cell.ownerIfIdle())
        }
    }

    @inlinable
    func withLockThenRelease<Result: Sendable, Released: Sendable>(
        _ body: (inout ReceptionistStateMachine<Element>) -> (Result, released: Released)
    ) -> Result {
        registry.state.withLockThenRelease { _ in
            let (result, released) = body(&cell.machine)
            return (result, released: (released, cell.ownerIfIdle()))
        }
    }
}

/// The machine of an observation's delivery engine, and the model it keeps alive while busy.
///
/// Guarded by the model's lock: both fields are accessed only inside `registry.state.withLock`,
/// except `owner`, which a drain also reads between two of its locked steps, while the machine
/// is busy and nothing else writes it. Hence `@unchecked Sendable`.
@usableFromInline
final class MachineCell<Element>: @unchecked Sendable {
    @usableFromInline @exclusivity(unchecked)
    var machine: ReceptionistStateMachine<Element>
    /// The model, while the machine has a drain scheduled.
    @usableFromInline @exclusivity(unchecked)
    var owner: AnyObject?

    @usableFromInline
    init(_ machine: ReceptionistStateMachine<Element>) {
        self.machine = machine
    }

    /// Buffers `element`, keeping `model` alive if the machine was idle. Called under the lock.
    ///
    /// What the buffer does not keep dies here, under the lock, when it cannot be a last
    /// reference: `element` itself when it was rejected or dropped by `dropNewest` (its values
    /// are copies of values the writer and the property still hold), or what a coalescing fold
    /// let go of (the previous write's new value, which is this write's old value). An element
    /// `dropOldest` evicted may hold the last reference to an older value: it goes to `batch`.
    ///
    /// A coalescing machine with an element waiting folds `element` into it in place with
    /// `fold` (the element waiting first, `element` second, left holding what the fold let go
    /// of), which the caller forms where the types are known: no merge closure to call, nothing
    /// built or returned.
    ///
    /// - Returns: whether a drain must be submitted after the lock is released.
    @inlinable
    func enqueue(
        _ element: consuming Element,
        model: AnyObject,
        batch: inout WriteBatch,
        fold: (_ pending: inout Element, _ new: inout Element) -> Void
    ) -> Bool where Element: Sendable {
        let action: ReceptionistStateMachine<Element>.EnqueueAction
        let notKept: Element?
        if machine.coalesces {
            var element = element
            (action, notKept) = machine.enqueue(making: { element }, foldingWith: { fold(&$0, &element) })
        } else {
            (action, notKept) = machine.enqueue(element)
        }
        if let notKept, action != .rejected, machine.policy.kind == .dropOldest {
            batch.release(notKept)
        }
        guard action == .submitDrain else { return false }
        owner = model
        return true
    }

    /// Lets go of the model once the machine is idle; the caller releases it after the lock.
    @inlinable
    func ownerIfIdle() -> AnyObject? {
        machine.isDrainScheduled ? nil : owner.take()
    }
}
