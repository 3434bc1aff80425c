#if canImport(Darwin) || os(Windows) || RECEPTIONIST_PORTABLE_SYNC
// The portable path: an OS mutex in heap storage (PlatformLock.swift).
#else
import Synchronization
#endif

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
/// ## Two implementations, one behaviour
/// - **Portable** (Apple platforms, Windows, and any build with `-Xswiftc
///   -DRECEPTIONIST_PORTABLE_SYNC`): the OS mutex (``PlatformLock``: `pthread_mutex_t`, or
///   `SRWLOCK` on Windows) and the value in one heap allocation (``LockedStorage``). It needs
///   nothing newer than the package's deployment floor (`Synchronization.Mutex` needs macOS 15 /
///   iOS 18). CI builds and runs the stress suites, under ThreadSanitizer too, with the flag, so
///   Linux tests exactly the code that Apple platforms run.
/// - **Native** (Linux and the other non-Apple platforms by default): `Synchronization.Mutex`,
///   with the value stored inline (no extra allocation). Benchmarks/README.md compares the two.
///
/// ThreadSanitizer: `Synchronization.Mutex` locks with atomics and futexes inside the standard
/// library, which ThreadSanitizer does not see on Linux, so every access a `Mutex` protects
/// would be reported as a race. Built with `-Xswiftc -DRECEPTIONIST_TSAN` (as `.ci/run` does for
/// its `swift test --sanitize=thread` run), each critical section is bracketed with
/// `__tsan_acquire`/`__tsan_release` on a per-lock address, so that the sanitizer checks
/// everything else and reports only real races. The portable path needs no annotation: the
/// sanitizer intercepts `pthread_mutex_lock`.
@usableFromInline
struct Locked<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: the portable path's storage is reached through pointers; every access to the
    // value goes through `withLock`, under the lock (the native path is a Sendable `Mutex`).

    #if canImport(Darwin) || os(Windows) || RECEPTIONIST_PORTABLE_SYNC
    @usableFromInline
    let storage: LockedStorage<Value>
    #else
    @usableFromInline
    let mutex: Mutex<Value>
    #endif

    #if RECEPTIONIST_TSAN && !(canImport(Darwin) || os(Windows) || RECEPTIONIST_PORTABLE_SYNC)
    @usableFromInline
    final class SanitizerToken: Sendable {
        @usableFromInline
        init() {}
    }

    @usableFromInline
    let sanitizerToken = SanitizerToken()
    #endif

    #if DEBUG
    /// Whether ``LockDiagnostics`` counts this lock (all the library's locks do).
    @usableFromInline
    let isCounted: Bool
    #endif

    @inlinable
    init(_ value: consuming sending Value) {
        #if canImport(Darwin) || os(Windows) || RECEPTIONIST_PORTABLE_SYNC
        storage = LockedStorage(value)
        #else
        mutex = Mutex(value)
        #endif
        #if DEBUG
        isCounted = true
        #endif
    }

    /// Test hook: a lock that stands for a user's own lock (a model's), which user code may hold
    /// while it calls the library; ``LockDiagnostics`` does not count it.
    init(uncounted value: consuming sending Value) {
        #if canImport(Darwin) || os(Windows) || RECEPTIONIST_PORTABLE_SYNC
        storage = LockedStorage(value)
        #else
        mutex = Mutex(value)
        #endif
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
        #if canImport(Darwin) || os(Windows) || RECEPTIONIST_PORTABLE_SYNC
        PlatformLock.lock(storage.lock)
        defer { PlatformLock.unlock(storage.lock) }
        #if DEBUG
        if isCounted { LockDiagnostics.didLock() }
        defer { if isCounted { LockDiagnostics.willUnlock() } }
        #endif
        return try body(&storage.value.pointee)
        #else
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            #if RECEPTIONIST_TSAN
            let address = Unmanaged.passUnretained(sanitizerToken).toOpaque()
            tsanAcquire(address)
            defer { tsanRelease(address) }
            #endif
            #if DEBUG
            if isCounted { LockDiagnostics.didLock() }
            defer { if isCounted { LockDiagnostics.willUnlock() } }
            #endif
            return try body(&value)
        }
        #endif
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

#if RECEPTIONIST_TSAN && !(canImport(Darwin) || os(Windows) || RECEPTIONIST_PORTABLE_SYNC)
@_silgen_name("__tsan_acquire")
@usableFromInline
func tsanAcquire(_ address: UnsafeMutableRawPointer)

@_silgen_name("__tsan_release")
@usableFromInline
func tsanRelease(_ address: UnsafeMutableRawPointer)
#endif
