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

/// The lock under the heap-stored implementations of ``Locked``, as one noncopyable handle that
/// owns the memory its primitive lives in: the only type that touches a lock primitive.
///
/// - **Futex** (the `RECEPTIONIST_FUTEX` builds): the futex mutex of `CReceptionistSync`
///   (CReceptionistSync.h explains its three states and its lock and unlock protocol). Locking
///   and unlocking are one atomic instruction each when nobody waits, inlined; a thread that
///   finds it held spins briefly, then sleeps until an unlock wakes it.
/// - **System** (otherwise): the operating system's mutex: `pthread_mutex_t` on every POSIX
///   system (Darwin, Glibc, Musl, Bionic), as swift-nio's `NIOLock` uses it, error-checking in
///   debug builds, or glibc's `PTHREAD_MUTEX_ADAPTIVE_NP` (it spins before it sleeps) with
///   `-DRECEPTIONIST_LOCK_PTHREAD_ADAPTIVE`; a slim reader/writer lock, taken exclusively, on
///   Windows.
///
/// Invariants: the primitive is initialised by `init` at the start of one heap allocation, where
/// it stays (no primitive may move once initialised: threads wait on its address), and is
/// destroyed, and the allocation freed, by `deinit`, once; being noncopyable, the handle cannot
/// be duplicated, so no copy can unlock or free it twice. Room for one value may follow the
/// primitive in the allocation (``init(followedBy:)``), for ``LockedStorage``: the lock and the
/// value it guards share one allocation and, when small, one cache line. Debug builds check
/// misuse: unlocking a lock nobody holds stops the program, and so does locking a lock the
/// thread already holds (POSIX) or destroying a held lock; the futex deadlocks where a debugger
/// shows it on a re-entrant lock.
@usableFromInline
struct PlatformLock: ~Copyable {
    // Which primitive (Locked.swift, "Three implementations", says where each flag comes from):
    // the futex mutex where Package.swift defines RECEPTIONIST_FUTEX (Linux, Android), unless the
    // portable path or glibc's adaptive mutex is asked for; otherwise the operating system's mutex.
    // Every `#if` below is this one.
    #if RECEPTIONIST_FUTEX && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
    @usableFromInline
    typealias Primitive = receptionist_futex_mutex
    #elseif os(Windows)
    @usableFromInline
    typealias Primitive = SRWLOCK
    #else
    @usableFromInline
    typealias Primitive = pthread_mutex_t
    #endif

    // Unsafe: a lock primitive must stay at the address it was initialised at (test: LockStressTests)
    @usableFromInline let primitive: UnsafeMutablePointer<Primitive>

    /// Where a value of `Value` starts in the allocation: after the primitive, aligned.
    @usableFromInline
    static func offset<Value: ~Copyable>(of _: Value.Type) -> Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<Primitive>.stride + alignment - 1) / alignment * alignment
    }

    /// A lock in an allocation of its own, with room for one `Value` after the primitive (left
    /// uninitialised: ``LockedStorage`` initialises it and deinitialises it before this dies).
    @usableFromInline
    init<Value: ~Copyable>(followedBy _: Value.Type) {
        // Unsafe: one allocation for the lock and the value it guards (row: "receptionist → DispatchQueue", contention section)
        let memory = UnsafeMutableRawPointer.allocate(
            byteCount: Self.offset(of: Value.self) + MemoryLayout<Value>.size,
            alignment: Swift.max(MemoryLayout<Primitive>.alignment, MemoryLayout<Value>.alignment)
        )
        primitive = memory.bindMemory(to: Primitive.self, capacity: 1)
        #if RECEPTIONIST_FUTEX && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        receptionist_futex_mutex_init(primitive)
        #elseif os(Windows)
        InitializeSRWLock(primitive)
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
        let status = pthread_mutex_init(primitive, &attributes)
        precondition(status == 0, "Receptionist: pthread_mutex_init failed (\(status))")
        #endif
    }

    /// Takes the lock, waiting while another thread holds it; the calling thread must not hold it.
    @inlinable
    @inline(__always)
    func lock() {
        #if RECEPTIONIST_FUTEX && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        receptionist_futex_mutex_lock(primitive)
        #elseif os(Windows)
        AcquireSRWLockExclusive(primitive)
        #else
        let status = pthread_mutex_lock(primitive)
        #if DEBUG
        precondition(
            status == 0, "Receptionist: pthread_mutex_lock failed (\(status)); EDEADLK means a re-entrant lock")
        #endif
        #endif
    }

    /// Releases the lock, which the calling thread holds, and lets one waiting thread take it.
    @inlinable
    @inline(__always)
    func unlock() {
        #if RECEPTIONIST_FUTEX && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        #if DEBUG
        precondition(receptionist_futex_mutex_is_locked(primitive), "Receptionist: unlock of a lock nobody holds")
        #endif
        receptionist_futex_mutex_unlock(primitive)
        #elseif os(Windows)
        ReleaseSRWLockExclusive(primitive)
        #else
        let status = pthread_mutex_unlock(primitive)
        #if DEBUG
        precondition(status == 0, "Receptionist: pthread_mutex_unlock failed (\(status))")
        #endif
        #endif
    }

    deinit {
        #if RECEPTIONIST_FUTEX && !RECEPTIONIST_PORTABLE_SYNC && !RECEPTIONIST_LOCK_PTHREAD_ADAPTIVE
        assert(!receptionist_futex_mutex_is_locked(primitive), "Receptionist: a lock was destroyed while held")
        #elseif os(Windows)
        // A slim reader/writer lock needs no destruction.
        #else
        let status = pthread_mutex_destroy(primitive)
        assert(status == 0, "Receptionist: pthread_mutex_destroy failed (\(status)): the lock is held")
        #endif
        // The whole allocation: it starts with the primitive.
        primitive.deallocate()
    }
}
