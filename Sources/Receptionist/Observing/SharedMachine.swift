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
        registry.withLockThenRelease { lock, _ in
            let result = cell.withMachine(lock, body)
            return (result, released: cell.ownerIfIdle(lock))
        }
    }

    @inlinable
    func withLockThenRelease<Result: Sendable, Released: Sendable>(
        _ body: (inout ReceptionistStateMachine<Element>) -> (Result, released: Released)
    ) -> Result {
        registry.withLockThenRelease { lock, _ in
            let (result, released) = cell.withMachine(lock, body)
            return (result, released: (released, cell.ownerIfIdle(lock)))
        }
    }
}

/// The machine of an observation's delivery engine, and the model it keeps alive while busy.
///
/// Guarded by the model's lock: its fields are reached only through accessors that take the
/// proof that the lock is held (``ModelLock``), except the owner, which the engine's handler
/// also reads between two of the drain's locked steps (``ownerWhileDraining``).
@usableFromInline
final class MachineCell<Element>: @unchecked Sendable {  // Unsafe: fields behind ModelLock (test: StressTests)
    // @unchecked: the fields are reached only with a ModelLock, or by ownerWhileDraining.

    /// The fields the model's lock guards; only the accessors below touch them.
    @usableFromInline
    struct Fields {
        @usableFromInline var machine: ReceptionistStateMachine<Element>
        /// The model, while the machine has a drain scheduled.
        @usableFromInline var owner: AnyObject?
        /// The model whose lock guards these fields (debug builds).
        @usableFromInline var binding = ModelLockBinding()

        @inlinable
        init(machine: ReceptionistStateMachine<Element>) {
            self.machine = machine
        }
    }

    // Unsafe: the model's lock, not the class, guards it (the accessors take its proof); the dynamic check costs every write and drain step (row: "@Observed → DispatchQueue (lossless)")
    @usableFromInline @exclusivity(unchecked)
    var fields: Fields

    @usableFromInline
    init(_ machine: ReceptionistStateMachine<Element>) {
        fields = Fields(machine: machine)
    }

    /// Runs `body` on the machine.
    @inlinable
    func withMachine<Result>(
        _ lock: borrowing ModelLock,
        _ body: (inout ReceptionistStateMachine<Element>) -> Result
    ) -> Result {
        lock.check(&fields.binding)
        return body(&fields.machine)
    }

    /// The model, for the engine's handler, which runs between two locked steps of a drain:
    /// the write that made the machine busy set it (under the lock, before the drain's first
    /// locked step, which the drain's lock acquisition orders after it), and only the step that
    /// leaves the machine idle clears it (``ownerIfIdle(_:)``, after the handler returned), so
    /// nothing writes it while the handler reads it.
    @inlinable
    var ownerWhileDraining: AnyObject {
        fields.owner!
    }

    /// Buffers `element`, keeping `model` alive if the machine was idle.
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
        _ lock: borrowing ModelLock,
        fold: (_ pending: inout Element, _ new: inout Element) -> Void
    ) -> Bool where Element: Sendable {
        lock.check(&fields.binding)
        let action: ReceptionistStateMachine<Element>.EnqueueAction
        let notKept: Element?
        if fields.machine.coalesces {
            var element = element
            (action, _, notKept) = fields.machine.enqueue(making: { element }, foldingWith: { fold(&$0, &element) })
        } else {
            (action, _, notKept) = fields.machine.enqueue(element)
        }
        if let notKept, action != .rejected, fields.machine.policy.kind == .dropOldest {
            batch.release(notKept)
        }
        guard action == .submitDrain else { return false }
        fields.owner = model
        return true
    }

    /// Lets go of the model once the machine is idle; the caller releases it after the lock.
    @inlinable
    func ownerIfIdle(_ lock: borrowing ModelLock) -> AnyObject? {
        lock.check(&fields.binding)
        return fields.machine.isDrainScheduled ? nil : fields.owner.take()
    }
}
