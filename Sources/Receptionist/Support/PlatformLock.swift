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

/// The operating system's mutex, as the portable ``Locked`` uses it: `pthread_mutex_t` on every
/// POSIX system (Darwin, Glibc, Musl, Bionic), `SRWLOCK` on Windows — what swift-nio's `NIOLock`
/// uses. Neither may move once initialised, so it always lives in heap storage that the library
/// allocated (``LockedStorage``).
///
/// Debug builds make the POSIX mutex error-checking: a thread that locks a lock it already holds
/// stops with a message instead of deadlocking silently.
#if os(Windows)
@usableFromInline
typealias PlatformLockPrimitive = SRWLOCK
#else
@usableFromInline
typealias PlatformLockPrimitive = pthread_mutex_t
#endif

@usableFromInline
enum PlatformLock {
    /// Initialises the primitive at `lock`, which must be uninitialised memory.
    @usableFromInline
    static func initialize(_ lock: UnsafeMutablePointer<PlatformLockPrimitive>) {
        #if os(Windows)
        InitializeSRWLock(lock)
        #else
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let status = pthread_mutex_init(lock, &attributes)
        precondition(status == 0, "Receptionist: pthread_mutex_init failed (\(status))")
        #endif
    }

    /// Deinitialises the primitive at `lock`; nobody may hold it.
    @usableFromInline
    static func destroy(_ lock: UnsafeMutablePointer<PlatformLockPrimitive>) {
        #if !os(Windows)
        let status = pthread_mutex_destroy(lock)
        assert(status == 0, "Receptionist: pthread_mutex_destroy failed (\(status)): the lock is held")
        #endif
    }

    @inlinable
    @inline(__always)
    static func lock(_ lock: UnsafeMutablePointer<PlatformLockPrimitive>) {
        #if os(Windows)
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
        #if os(Windows)
        ReleaseSRWLockExclusive(lock)
        #else
        let status = pthread_mutex_unlock(lock)
        #if DEBUG
        precondition(status == 0, "Receptionist: pthread_mutex_unlock failed (\(status))")
        #endif
        #endif
    }
}

/// One heap allocation that holds an OS mutex and the value it guards, for the portable
/// ``Locked``. Owned by exactly one `Locked` (it is `~Copyable`), so it is freed, and the value
/// deinitialised, when that `Locked` dies — as `Synchronization.Mutex` does with its value.
@usableFromInline
struct LockedStorage<Value: ~Copyable>: ~Copyable {
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

    deinit {
        value.deinitialize(count: 1)
        PlatformLock.destroy(lock)
        UnsafeMutableRawPointer(lock).deallocate()
    }
}
