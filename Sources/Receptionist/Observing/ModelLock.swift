/// Proof that the caller holds a model's lock (``ModelRegistry``): every field that lock guards
/// in another object (a property's value and observers, an observation's machine, a snapshot's
/// last state) is reached only through an accessor that takes one.
///
/// Only ``ModelRegistry/withLock(_:)`` and ``ModelRegistry/withLockThenRelease(_:)`` make one,
/// from the locked state, and lend it to their closure. It is noncopyable and lent (`borrowing`),
/// so the compiler rejects a closure that keeps it, returns it, or lets an escaping closure
/// capture it: an accessor that takes one can only be called inside a critical section of the
/// model's lock. (Those are compile-time properties, so no test can exercise their violation;
/// `ModelLockTests` checks what the proof guards at run time.) It has no size: passing it costs
/// nothing.
@usableFromInline
struct ModelLock: ~Copyable, Sendable {
    /// Made from the model's locked state, which only the lock hands out.
    @inlinable
    init(_ state: inout ModelRegistry.State) {}
}

extension ModelRegistry {
    /// Runs `body` under the model's lock, with the proof that it is held and the model's state.
    ///
    /// `body` must not call user code and must not release a user value (see
    /// ``withLockThenRelease(_:)``).
    @inlinable
    func withLock<Result>(_ body: (borrowing ModelLock, inout State) -> sending Result) -> sending Result {
        state.withLock { state in
            let lock = ModelLock(&state)
            return body(lock, &state)
        }
    }

    /// Runs `body` under the model's lock, with the proof that it is held and the model's state;
    /// what `body` sets aside in `released` dies after the lock is released.
    @inlinable
    func withLockThenRelease<Result, Released>(
        _ body: (borrowing ModelLock, inout State) -> sending (Result, released: Released)
    ) -> Result {
        state.withLockThenRelease { state in
            let lock = ModelLock(&state)
            return body(lock, &state)
        }
    }
}
