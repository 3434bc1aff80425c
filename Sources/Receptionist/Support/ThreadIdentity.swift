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

/// A cheap identifier of the calling thread: non-zero, and never the same for two threads that
/// are running at the same time (a thread that ended may pass its identifier on to a new one).
///
/// That is all its one use needs: an update that finds its property written meanwhile tells its
/// own closure's write from another thread's by it, and the other thread was running during the
/// update. On Glibc it is `pthread_self()` (an integer there, unique among live threads), which
/// costs a load. Elsewhere, and in the portable build that every submission's CI runs on Linux
/// (`-DRECEPTIONIST_PORTABLE_SYNC`, which Package.swift defines on Apple platforms), it assumes
/// nothing about `pthread_t` (a pointer on Darwin and Musl, a structure where POSIX allows it):
/// each thread is given a number from a counter the first time it asks, kept in thread-specific
/// storage (the number itself is the stored pointer value, so nothing is allocated and nothing
/// must be freed when the thread ends). On Windows it is `GetCurrentThreadId()`, which the system
/// documents as unique among running threads. (The thread-specific number cost every write about
/// 35 instructions more than `pthread_self()`: row "ObservableValue + coalesce() →
/// DispatchQueue".)
@usableFromInline
func currentThreadIdentity() -> UInt {
    #if os(Windows)
    return UInt(GetCurrentThreadId())
    #elseif canImport(Glibc) && !RECEPTIONIST_PORTABLE_SYNC
    return UInt(pthread_self())
    #else
    if let stored = pthread_getspecific(ThreadIdentity.key) {
        return UInt(bitPattern: stored)
    }
    return ThreadIdentity.assignIdentityToCurrentThread()
    #endif
}

#if !os(Windows) && !(canImport(Glibc) && !RECEPTIONIST_PORTABLE_SYNC)
@usableFromInline
enum ThreadIdentity {
    @usableFromInline
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "Receptionist: pthread_key_create failed (\(status))")
        return key
    }()

    /// The last number given to a thread.
    private static let lastIdentity = AtomicValue<Int>(0)

    @usableFromInline
    static func assignIdentityToCurrentThread() -> UInt {
        let identity = UInt(lastIdentity.add(1, ordering: .relaxed).newValue)
        // Unsafe: the number kept in the thread-specific pointer itself, never dereferenced (test: ModelTransactionTests)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: identity))
        return identity
    }
}
#endif
