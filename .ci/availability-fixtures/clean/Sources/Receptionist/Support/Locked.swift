#if canImport(Darwin) || RECEPTIONIST_PORTABLE_SYNC
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The portable path: a pthread mutex (Apple builds always take it).
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private var mutex = pthread_mutex_t()

    init(_ value: Value) {
        self.value = value
        pthread_mutex_init(&mutex, nil)
    }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body(&value)
    }
}
#else
import Synchronization

/// Linux: the standard library's `Mutex`.
struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    let mutex: Mutex<Value>

    init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }
}
#endif
