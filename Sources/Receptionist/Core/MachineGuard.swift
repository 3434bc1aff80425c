/// Where a delivery engine's state machine lives, and the lock that guards it.
///
/// - ``OwnedMachine``: the engine's own lock (a ``Receptionist``, a pipeline's delivery).
/// - `SharedMachine`: the lock of the model whose property the engine delivers, which also
///   guards the property's value, so that a write to an observed property takes one lock to
///   store the value and to append the change for every observation.
@usableFromInline
protocol MachineGuard<Element>: ~Copyable, Sendable {
    associatedtype Element: Sendable

    /// Runs `body` with exclusive access to the machine. `body` must not call user code and must
    /// not release user values (see ``Locked``).
    func withLock<Result: Sendable>(_ body: (inout ReceptionistStateMachine<Element>) -> Result) -> Result

    /// Runs `body` with exclusive access to the machine, then releases what it returns as
    /// `released` after the lock is released.
    func withLockThenRelease<Result: Sendable, Released: Sendable>(
        _ body: (inout ReceptionistStateMachine<Element>) -> (Result, released: Released)
    ) -> Result
}

/// A machine behind a lock of its own.
@usableFromInline
struct OwnedMachine<Element: Sendable>: MachineGuard, ~Copyable {
    @usableFromInline
    let locked: Locked<ReceptionistStateMachine<Element>>

    init(_ machine: consuming sending ReceptionistStateMachine<Element>) {
        locked = Locked(machine)
    }

    @inlinable
    func withLock<Result: Sendable>(_ body: (inout ReceptionistStateMachine<Element>) -> Result) -> Result {
        locked.withLock { body(&$0) }
    }

    @inlinable
    func withLockThenRelease<Result: Sendable, Released: Sendable>(
        _ body: (inout ReceptionistStateMachine<Element>) -> (Result, released: Released)
    ) -> Result {
        locked.withLockThenRelease { body(&$0) }
    }
}
