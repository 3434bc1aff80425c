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
/// are running at the same time.
///
/// It assumes nothing about `pthread_t` (an integer on Glibc, a pointer on Darwin and Musl, a
/// structure where POSIX allows it): on POSIX systems each thread is given a number from a
/// counter the first time it asks, kept in thread-specific storage (the number itself is the
/// stored pointer value, so nothing is allocated and nothing must be freed when the thread
/// ends). Numbers are never reused. On Windows it is `GetCurrentThreadId()`, which the system
/// documents as unique among running threads.
@usableFromInline
func currentThreadIdentity() -> UInt {
    #if os(Windows)
    return UInt(GetCurrentThreadId())
    #else
    if let stored = pthread_getspecific(ThreadIdentity.key) {
        return UInt(bitPattern: stored)
    }
    return ThreadIdentity.assignIdentityToCurrentThread()
    #endif
}

#if !os(Windows)
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
