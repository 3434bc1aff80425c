/// The library's lock and the value it guards, with the library's one rule built in. Every lock
/// of the library is a `Locked`; no other file touches a lock primitive.
///
/// **Decide under the lock, act outside it.** A critical section only reads and changes the
/// guarded value. It never calls user code, and it never lets go of anything whose
/// deinitialiser may be user code (an element, a handler, a closure and its captures): it
/// returns such values with ``withLockThenRelease(_:)``, which releases them once the lock is
/// released. That is the only way the library releases user values taken from locked state.
///
/// Debug builds count the library's locks each thread holds (``LockDiagnostics``), and the
/// library checks that the count is zero before it calls user code and before it releases what
/// a critical section set aside; tests check it from inside deinitialisers.
///
/// ## Three implementations, one behaviour
/// Chosen per platform by measurement (Benchmarks/README.md, "Contention"). Package.swift is the
/// one place that names platforms: it defines `RECEPTIONIST_PORTABLE_SYNC` on Apple platforms and
/// Windows and `RECEPTIONIST_FUTEX` on Linux and Android, and the `#if`s that choose an
/// implementation read only flags. The others stay selectable with `-Xswiftc -D` flags, so that
/// they can be compared, and CI runs this folder's code under ThreadSanitizer with each
/// (`.ci/check-sync`):
/// - **Futex** (`RECEPTIONIST_FUTEX`: Linux and Android by default): ``PlatformLock`` is
///   the futex mutex `receptionist_futex_mutex` (the `CReceptionistSync` target), a
///   three-state futex word with a short spin, in one heap allocation with the value
///   (``LockedStorage``). Its fast paths are one atomic instruction each, inlined; a contended
///   thread spins briefly, then sleeps until an unlock wakes it. (glibc's adaptive mutex was
///   faster under contention on some rows, but its uncontended cost made others slower than with
///   `Mutex`; this one is slower than neither anywhere measured.)
/// - **Portable** (`RECEPTIONIST_PORTABLE_SYNC`: Apple platforms, Windows, and any build with
///   `-Xswiftc -DRECEPTIONIST_PORTABLE_SYNC`): the OS mutex (``PlatformLock`` is
///   `pthread_mutex_t`, or `SRWLOCK` on Windows), also in ``LockedStorage``. It needs nothing
///   newer than the package's deployment floor (`Synchronization.Mutex` needs macOS 15 /
///   iOS 18), and `.ci/run --full` runs the whole suite with the flag, so Linux tests exactly
///   the code that Apple platforms run. With `-Xswiftc -DRECEPTIONIST_LOCK_PTHREAD_ADAPTIVE` the
///   futex builds take the OS mutex too, and on glibc its mutex is `PTHREAD_MUTEX_ADAPTIVE_NP` (it spins
///   before it sleeps), for comparison.
/// - **Mutex** (the platforms with neither flag, and futex builds with `-Xswiftc
///   -DRECEPTIONIST_LOCK_MUTEX`): `Synchronization.Mutex`, the value stored inline
///   (``MutexCell``). Not the Linux default: there it is a priority-inheritance futex, so every
///   contended acquisition becomes a sleep and a wake (swiftlang/swift#88440, fixed upstream
///   after Swift 6.3).
///
/// ThreadSanitizer sees the futex word's atomic operations and intercepts `pthread_mutex_lock`,
/// so it checks the first two as they are. `Synchronization.Mutex` locks inside the standard
/// library, where it does not see it; see ``MutexCell`` for the annotation that path needs.
@usableFromInline
struct Locked<Value: ~Copyable>: ~Copyable, Sendable {

    @usableFromInline
    let cell: LockCell<Value>

    #if DEBUG
    /// Whether ``LockDiagnostics`` counts this lock (all the library's locks do).
    @usableFromInline
    let isCounted: Bool
    #endif

    @inlinable
    init(_ value: consuming sending Value) {
        cell = LockCell(value)
        #if DEBUG
        isCounted = true
        #endif
    }

    /// Test hook: a lock that stands for a user's own lock (a model's), which user code may hold
    /// while it calls the library; ``LockDiagnostics`` does not count it.
    init(uncounted value: consuming sending Value) {
        cell = LockCell(value)
        #if DEBUG
        isCounted = false
        #endif
    }

    /// Runs `body` with exclusive access to the value.
    ///
    /// `body` must not call user code and must not release a user value; see
    /// ``withLockThenRelease(_:)``.
    @inlinable
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try cell.withLock { (value: inout sending Value) throws(E) -> sending Result in
            #if DEBUG
            if isCounted { LockDiagnostics.didLock() }
            defer { if isCounted { LockDiagnostics.willUnlock() } }
            #endif
            return try body(&value)
        }
    }

    /// Runs `body` with exclusive access to the value; `body` returns its result and what it
    /// took out of the value that must not die under the lock (replaced or discarded elements,
    /// a handler, a closure), which is released after the lock is released, before this returns.
    @inlinable
    borrowing func withLockThenRelease<Result, Released>(
        _ body: (inout sending Value) -> sending (Result, released: Released)
    ) -> Result {
        let (result, released) = withLock(body)
        #if DEBUG
        LockDiagnostics.assertNoLockHeld("releasing values set aside under a lock")
        #endif
        _ = consume released
        return result
    }
}

// Which cell a build uses ("Three implementations" above says where the flags come from):
// LockedStorage for the portable and futex implementations, MutexCell (whose file has the
// negation of this condition) otherwise.
#if RECEPTIONIST_PORTABLE_SYNC || (RECEPTIONIST_FUTEX && !RECEPTIONIST_LOCK_MUTEX)
/// The lock and value of a ``Locked``: a ``PlatformLock`` primitive and the value in heap storage.
@usableFromInline
typealias LockCell<Value: ~Copyable> = LockedStorage<Value>
#else
/// The lock and value of a ``Locked``: `Synchronization.Mutex`.
@usableFromInline
typealias LockCell<Value: ~Copyable> = MutexCell<Value>
#endif
