#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#elseif os(Windows)
import WinSDK
#endif

#if RECEPTIONIST_FUTEX
import CReceptionistSync
#endif

// Which primitive sits under ``LockedStorage`` (Locked.swift, "Three implementations", says
// where each flag comes from): the futex mutex where Package.swift defines RECEPTIONIST_FUTEX
// (Linux, Android), unless the portable path or glibc's adaptive mutex is asked for; otherwise
// the operating system's mutex.
#if RECEPTIONIST_FUTEX && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
/// The lock primitive under the heap-stored implementations of ``Locked``: ``FutexLock``.
@usableFromInline
typealias PlatformLock = FutexLock
#else
/// The lock primitive under the heap-stored implementations of ``Locked``: ``SystemLock``.
@usableFromInline
typealias PlatformLock = SystemLock
#endif

/// A lock primitive under ``LockedStorage``: a `Primitive` in memory the library allocated, where
/// it stays (none may move once initialised), and the operations on it.
///
/// Debug builds check misuse: a thread that locks a lock it already holds stops with a message
/// (``SystemLock`` on POSIX) or deadlocks where a debugger shows it (``FutexLock``), instead of
/// corrupting state.
@usableFromInline
protocol LockPrimitive {
    associatedtype Primitive

    /// Initialises the primitive at `lock`, which must be uninitialised memory.
    static func initialize(_ lock: UnsafeMutablePointer<Primitive>)

    /// Deinitialises the primitive at `lock`; nobody may hold it.
    static func destroy(_ lock: UnsafeMutablePointer<Primitive>)

    /// Takes the lock, waiting while another thread holds it; the calling thread must not hold it.
    static func lock(_ lock: UnsafeMutablePointer<Primitive>)

    /// Releases the lock, which the calling thread holds, and lets one waiting thread take it.
    static func unlock(_ lock: UnsafeMutablePointer<Primitive>)
}

#if RECEPTIONIST_FUTEX
/// The futex mutex of `CReceptionistSync` (CReceptionistSync.h explains its three states and its
/// lock and unlock protocol). Locking and unlocking are one atomic instruction each when nobody
/// waits, inlined; a thread that finds it held spins briefly, then sleeps until an unlock wakes
/// it. Compiled wherever Package.swift defines `RECEPTIONIST_FUTEX`, also where another lock is
/// selected, so that every Linux build type-checks it.
@usableFromInline
enum FutexLock: LockPrimitive {
    @usableFromInline
    typealias Primitive = receptionist_futex_mutex

    @usableFromInline
    static func initialize(_ lock: UnsafeMutablePointer<Primitive>) {
        receptionist_futex_mutex_init(lock)
    }

    @usableFromInline
    static func destroy(_ lock: UnsafeMutablePointer<Primitive>) {
        assert(!receptionist_futex_mutex_is_locked(lock), "Receptionist: a lock was destroyed while held")
    }

    @inlinable
    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<Primitive>) {
        receptionist_futex_mutex_lock(lock)
    }

    @inlinable
    @inline(__always)
    static func unlock(_ lock: UnsafeMutablePointer<Primitive>) {
        #if DEBUG
        precondition(receptionist_futex_mutex_is_locked(lock), "Receptionist: unlock of a lock nobody holds")
        #endif
        receptionist_futex_mutex_unlock(lock)
    }
}
#endif

#if os(Windows)
/// The operating system's mutex: on Windows a slim reader/writer lock, taken exclusively (it needs
/// no destruction).
@usableFromInline
enum SystemLock: LockPrimitive {
    @usableFromInline
    typealias Primitive = SRWLOCK

    @usableFromInline
    static func initialize(_ lock: UnsafeMutablePointer<Primitive>) {
        InitializeSRWLock(lock)
    }

    @usableFromInline
    static func destroy(_ lock: UnsafeMutablePointer<Primitive>) {}

    @inlinable
    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<Primitive>) {
        AcquireSRWLockExclusive(lock)
    }

    @inlinable
    @inline(__always)
    static func unlock(_ lock: UnsafeMutablePointer<Primitive>) {
        ReleaseSRWLockExclusive(lock)
    }
}
#else
/// The operating system's mutex: `pthread_mutex_t` on every POSIX system (Darwin, Glibc, Musl,
/// Bionic), as swift-nio's `NIOLock` uses it. Error-checking in debug builds; glibc's
/// `PTHREAD_MUTEX_ADAPTIVE_NP` (it spins before it sleeps) with `-DRECEPTIONIST_LOCK_PTHREAD_ADAPTIVE`.
@usableFromInline
enum SystemLock: LockPrimitive {
    @usableFromInline
    typealias Primitive = pthread_mutex_t

    @usableFromInline
    static func initialize(_ lock: UnsafeMutablePointer<Primitive>) {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        #if RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE && canImport(Glibc)
        // Also in debug builds (without the error check then): the stress suites must run the
        // mutex the flag selects.
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #elseif DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let status = pthread_mutex_init(lock, &attributes)
        precondition(status == 0, "Receptionist: pthread_mutex_init failed (\(status))")
    }

    @usableFromInline
    static func destroy(_ lock: UnsafeMutablePointer<Primitive>) {
        let status = pthread_mutex_destroy(lock)
        assert(status == 0, "Receptionist: pthread_mutex_destroy failed (\(status)): the lock is held")
    }

    @inlinable
    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<Primitive>) {
        let status = pthread_mutex_lock(lock)
        #if DEBUG
        precondition(
            status == 0, "Receptionist: pthread_mutex_lock failed (\(status)); EDEADLK means a re-entrant lock")
        #endif
    }

    @inlinable
    @inline(__always)
    static func unlock(_ lock: UnsafeMutablePointer<Primitive>) {
        let status = pthread_mutex_unlock(lock)
        #if DEBUG
        precondition(status == 0, "Receptionist: pthread_mutex_unlock failed (\(status))")
        #endif
    }
}
#endif
