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
/// would otherwise hide. Release builds count nothing: ``isTracking`` is `false` and
/// ``locksHeldByCurrentThread`` is 0.
@usableFromInline
enum LockDiagnostics {
    /// Whether this build counts held locks (debug builds).
    static var isTracking: Bool {
        #if DEBUG
        true
        #else
        false
        #endif
    }

    /// The number of the library's locks the calling thread holds now.
    static var locksHeldByCurrentThread: Int {
        #if DEBUG
        Int(bitPattern: pthread_getspecific(key))
        #else
        0
        #endif
    }

    #if DEBUG
    /// A thread-specific counter, stored in the pointer value itself (no allocation).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "Receptionist: pthread_key_create failed (\(status))")
        return key
    }()

    @usableFromInline
    static func didLock() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: locksHeldByCurrentThread + 1))
    }

    @usableFromInline
    static func willUnlock() {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: locksHeldByCurrentThread - 1))
    }

    /// Stops the program if the calling thread holds one of the library's locks.
    @usableFromInline
    static func assertNoLockHeld(_ what: @autoclosure () -> String) {
        let held = locksHeldByCurrentThread
        precondition(held == 0, "Receptionist internal error: \(what()) while holding \(held) of the library's locks")
    }
    #endif
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
