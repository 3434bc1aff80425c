import Synchronization

/// A `Mutex` that also tells ThreadSanitizer about the ordering it provides.
///
/// `Synchronization.Mutex` locks with atomics and futexes inside the standard library, which
/// ThreadSanitizer does not see on Linux: every access a `Mutex` protects is reported as a race.
/// Built with `-Xswiftc -DRECEPTIONIST_TSAN` (as `.ci/run` does for its
/// `swift test --sanitize=thread` run), each critical section is bracketed with
/// `__tsan_acquire`/`__tsan_release` on a per-lock address, so the sanitizer checks everything
/// else and reports only real races. In every other build this is exactly `Mutex.withLock`.
@usableFromInline
struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
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

    /// Runs `body` with exclusive access to the value. `body` must not call user code.
    @inlinable
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            #if RECEPTIONIST_TSAN
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
func tsanAcquire(_ address: UnsafeMutableRawPointer)

@_silgen_name("__tsan_release")
@usableFromInline
func tsanRelease(_ address: UnsafeMutableRawPointer)
#endif
