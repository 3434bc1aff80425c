#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Debug builds: how many of the library's locks (``Locked``) the current thread holds.
///
/// The library asserts that the count is zero wherever it calls user code (task blocks, stage
/// closures, `update` closures, observers) and wherever it releases what a critical section set
/// aside. Tests assert it from inside deinitialisers, which is where user code under a lock
/// would otherwise hide. Release builds, and platforms without POSIX thread-specific storage,
/// count nothing: ``isTracking`` is `false` and ``locksHeldByCurrentThread`` is 0.
@usableFromInline
enum LockDiagnostics {
    #if DEBUG && (canImport(Darwin) || canImport(Glibc) || canImport(Musl))
    /// Whether this build counts held locks.
    static let isTracking = true

    /// A thread-specific counter, stored in the pointer value itself (no allocation).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "Receptionist: pthread_key_create failed (\(status))")
        return key
    }()

    /// The number of the library's locks the calling thread holds now.
    static var locksHeldByCurrentThread: Int {
        Int(bitPattern: pthread_getspecific(key))
    }

    @usableFromInline
    static func didLock() {
        // Unsafe: a count kept in the thread-specific pointer itself, never dereferenced (test: LockDiagnosticsTests)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: locksHeldByCurrentThread + 1))
    }

    @usableFromInline
    static func willUnlock() {
        // Unsafe: a count kept in the thread-specific pointer itself, never dereferenced (test: LockDiagnosticsTests)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: locksHeldByCurrentThread - 1))
    }
    #else
    static let isTracking = false
    static var locksHeldByCurrentThread: Int { 0 }
    @usableFromInline static func didLock() {}
    @usableFromInline static func willUnlock() {}
    #endif

    /// Stops the program if the calling thread holds one of the library's locks.
    @usableFromInline
    static func assertNoLockHeld(_ what: @autoclosure () -> String) {
        let held = locksHeldByCurrentThread
        precondition(held == 0, "Receptionist internal error: \(what()) while holding \(held) of the library's locks")
    }
}

/// Debug builds: stops the program if the calling thread holds one of the library's locks.
/// Called right before the library runs user code. Compiles to nothing in release builds.
@inlinable
@inline(__always)
func assertNoLockHeld(_ what: @autoclosure () -> String) {
    #if DEBUG
    LockDiagnostics.assertNoLockHeld(what())
    #endif
}
