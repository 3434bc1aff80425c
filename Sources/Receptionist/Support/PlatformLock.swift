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

// Which primitive: the futex mutex of CReceptionistSync on Linux and Android (unless the
// portable path or glibc's adaptive mutex is asked for); the OS mutex everywhere else.
#if (os(Linux) || os(Android)) && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
import CReceptionistSync

/// The lock primitive under ``LockedStorage``: the futex mutex (CReceptionistSync.h explains its
/// states and its lock and unlock protocol).
@usableFromInline
typealias PlatformLockPrimitive = receptionist_futex_mutex
#elseif os(Windows)
@usableFromInline
typealias PlatformLockPrimitive = SRWLOCK
#else
/// The lock primitive under ``LockedStorage``: the POSIX mutex, as swift-nio's `NIOLock` uses it.
@usableFromInline
typealias PlatformLockPrimitive = pthread_mutex_t
#endif

/// The primitive under the heap-stored implementations of ``Locked``: the futex mutex on Linux
/// and Android, otherwise the operating system's mutex, `pthread_mutex_t` on every POSIX system
/// (Darwin, Glibc, Musl, Bionic), `SRWLOCK` on Windows. None may move once initialised, so it
/// always lives in heap storage that the library allocated (``LockedStorage``).
///
/// Debug builds make the POSIX mutex error-checking, and check the futex mutex's word on unlock:
/// a thread that locks a lock it already holds stops with a message (POSIX) or deadlocks where a
/// debugger shows it (futex), instead of corrupting state.
@usableFromInline
enum PlatformLock {
    /// Initialises the primitive at `lock`, which must be uninitialised memory.
    @usableFromInline
    static func initialize(_ lock: UnsafeMutablePointer<PlatformLockPrimitive>) {
        #if (os(Linux) || os(Android)) && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        receptionist_futex_mutex_init(lock)
        #elseif os(Windows)
        InitializeSRWLock(lock)
        #else
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
        #endif
    }

    /// Deinitialises the primitive at `lock`; nobody may hold it.
    @usableFromInline
    static func destroy(_ lock: UnsafeMutablePointer<PlatformLockPrimitive>) {
        #if (os(Linux) || os(Android)) && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        assert(!receptionist_futex_mutex_is_locked(lock), "Receptionist: a lock was destroyed while held")
        #elseif !os(Windows)
        let status = pthread_mutex_destroy(lock)
        assert(status == 0, "Receptionist: pthread_mutex_destroy failed (\(status)): the lock is held")
        #endif
    }

    @inlinable
    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<PlatformLockPrimitive>) {
        #if (os(Linux) || os(Android)) && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        receptionist_futex_mutex_lock(lock)
        #elseif os(Windows)
        AcquireSRWLockExclusive(lock)
        #else
        let status = pthread_mutex_lock(lock)
        #if DEBUG
        precondition(
            status == 0, "Receptionist: pthread_mutex_lock failed (\(status)); EDEADLK means a re-entrant lock")
        #endif
        #endif
    }

    @inlinable
    @inline(__always)
    static func unlock(_ lock: UnsafeMutablePointer<PlatformLockPrimitive>) {
        #if (os(Linux) || os(Android)) && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        #if DEBUG
        precondition(receptionist_futex_mutex_is_locked(lock), "Receptionist: unlock of a lock nobody holds")
        #endif
        receptionist_futex_mutex_unlock(lock)
        #elseif os(Windows)
        ReleaseSRWLockExclusive(lock)
        #else
        let status = pthread_mutex_unlock(lock)
        #if DEBUG
        precondition(status == 0, "Receptionist: pthread_mutex_unlock failed (\(status))")
        #endif
        #endif
    }
}

/// One heap allocation that holds a ``PlatformLock`` primitive and the value it guards, for the
/// futex and portable implementations of ``Locked``. Owned by exactly one `Locked` (it is `~Copyable`), so it is freed, and the value
/// deinitialised, when that `Locked` dies — as `Synchronization.Mutex` does with its value.
@usableFromInline
struct LockedStorage<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: the value is reached through a pointer, only under the lock (`withLock`).
    @usableFromInline
    let lock: UnsafeMutablePointer<PlatformLockPrimitive>
    @usableFromInline
    let value: UnsafeMutablePointer<Value>

    /// Where the value starts in the allocation: after the lock, aligned for `Value`.
    private static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<PlatformLockPrimitive>.stride + alignment - 1) / alignment * alignment
    }

    @usableFromInline
    init(_ value: consuming Value) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: Self.valueOffset + MemoryLayout<Value>.size,
            alignment: Swift.max(MemoryLayout<PlatformLockPrimitive>.alignment, MemoryLayout<Value>.alignment)
        )
        lock = raw.bindMemory(to: PlatformLockPrimitive.self, capacity: 1)
        PlatformLock.initialize(lock)
        self.value = (raw + Self.valueOffset).bindMemory(to: Value.self, capacity: 1)
        self.value.initialize(to: value)
    }

    /// Runs `body` with the lock held.
    @inlinable
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        PlatformLock.lock(lock)
        defer { PlatformLock.unlock(lock) }
        return try body(&value.pointee)
    }

    deinit {
        value.deinitialize(count: 1)
        PlatformLock.destroy(lock)
        UnsafeMutableRawPointer(lock).deallocate()
    }
}
