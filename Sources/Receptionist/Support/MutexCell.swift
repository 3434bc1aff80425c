// The `Synchronization.Mutex` implementation of `Locked` (see Locked.swift, "Three
// implementations", for where the flags come from): compiled where `LockCell` is this type, and
// nowhere else, so the condition is the exact negation of the one in Locked.swift.
#if !(RECEPTIONIST_PORTABLE_SYNC || (RECEPTIONIST_FUTEX && !RECEPTIONIST_LOCK_MUTEX))
import Synchronization

/// A ``Locked``'s lock and value as one `Synchronization.Mutex`, stored inline.
///
/// ThreadSanitizer: `Mutex` locks with atomics and futexes inside the standard library, which
/// ThreadSanitizer does not see on Linux, so every access it protects would be reported as a
/// race. Built with `-Xswiftc -DRECEPTIONIST_TSAN` (as `.ci/check-sync` does for its sanitizer run
/// of this path), each critical section is bracketed with `__tsan_acquire`/`__tsan_release` on a
/// per-lock address, so that the sanitizer checks everything else and reports only real races.
@usableFromInline
struct MutexCell<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline
    let mutex: Mutex<Value>

    #if RECEPTIONIST_TSAN
    @usableFromInline
    final class SanitizerToken: Sendable {
        @usableFromInline
        init() {}
    }

    @usableFromInline
    let sanitizerToken = SanitizerToken()
    #endif

    @inlinable
    init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    @inlinable
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            #if RECEPTIONIST_TSAN
            // Unsafe: the token's address names this lock to ThreadSanitizer, never dereferenced (test: LockStressTests)
            let address = Unmanaged.passUnretained(sanitizerToken).toOpaque()
            tsanAcquire(address)
            defer { tsanRelease(address) }
            #endif
            return try body(&value)
        }
    }
}

#if RECEPTIONIST_TSAN
@_silgen_name("__tsan_acquire")
@usableFromInline
// Unsafe: the sanitizer's C entry point takes an address (test: LockStressTests)
func tsanAcquire(_ address: UnsafeMutableRawPointer)

@_silgen_name("__tsan_release")
@usableFromInline
// Unsafe: the sanitizer's C entry point takes an address (test: LockStressTests)
func tsanRelease(_ address: UnsafeMutableRawPointer)
#endif
#endif
