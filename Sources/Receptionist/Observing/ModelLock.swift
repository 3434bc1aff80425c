/// Proof that the caller holds a model's lock (``ModelRegistry``): every field that lock guards
/// in another object (a property's value and observers, an observation's machine, a snapshot's
/// last state) is reached only through an accessor that takes one.
///
/// Only the lock can make one. It is made from the model's locked ``ModelRegistry/State``, which
/// is noncopyable and which only `ModelRegistry.swift` can create (its initialiser is
/// `fileprivate`): the one `inout State` that exists is the one the lock lends to a critical
/// section. (The initialiser itself cannot be `fileprivate`: ``ModelRegistry/withLock(_:)`` is
/// `@inlinable`, so that a model's write is specialised in the client, and an inlinable body may
/// only call `@usableFromInline` declarations, which are at least internal.)
/// ``ModelRegistry/withLock(_:)`` and ``ModelRegistry/withLockThenRelease(_:)`` make it and lend
/// it to their closure. It is noncopyable and lent (`borrowing`), so the compiler rejects a
/// closure that keeps it, returns it, or lets an escaping closure capture it: an accessor that
/// takes one can only be called inside a critical section of a model's lock. (Those are
/// compile-time properties, so no test can exercise their violation.)
///
/// That it is the lock of the model whose fields the accessor reaches, debug builds check: there
/// the proof carries its model's identity, and each object whose fields it guards remembers the
/// model of the first proof it was shown (``ModelLockBinding``), which comes from the model the
/// object belongs to (a property's storage is reached through its model), and stops the program
/// on another (`ModelLockTests`). In release builds it has no size: passing it costs nothing.
@usableFromInline
struct ModelLock: ~Copyable, Sendable {
    #if DEBUG
    /// The model whose lock this proves (its state's identity).
    @usableFromInline
    let model: ObjectIdentifier
    #endif

    /// Made from the model's locked state, which only the lock hands out.
    @inlinable
    init(_ state: inout ModelRegistry.State) {
        #if DEBUG
        model = ObjectIdentifier(state.identity)
        #endif
    }

    /// Debug builds: stops the program unless this is the lock of the model that guards the
    /// fields `binding` belongs to (the model of the first proof they were shown). Release builds:
    /// nothing (`binding` has no size).
    @inlinable
    @inline(__always)
    borrowing func check(_ binding: inout ModelLockBinding) {
        #if DEBUG
        if let bound = binding.model {
            precondition(
                bound == model,
                "Receptionist internal error: fields guarded by one model's lock reached under another model's lock")
        } else {
            binding.model = model
        }
        #endif
    }
}

/// Which model's lock guards an object's fields, for the debug-build check of ``ModelLock``:
/// the model of the first proof they were shown. No size in release builds.
@usableFromInline
struct ModelLockBinding {
    #if DEBUG
    @usableFromInline
    var model: ObjectIdentifier?
    #endif

    @inlinable
    init() {}
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
