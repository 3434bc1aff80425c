/// One heap allocation that holds a ``PlatformLock`` primitive and the value it guards, for the
/// futex and portable implementations of ``Locked``. Owned by exactly one `Locked` (it is
/// `~Copyable`), so it is freed, and the value deinitialised, when that `Locked` dies — as
/// `Synchronization.Mutex` does with its value.
///
/// Invariants: ``value`` points into ``lock``'s allocation, which lives exactly as long as this
/// storage; the value is initialised by `init` and deinitialised by `deinit` (before the lock's
/// own `deinit` frees the allocation: a struct's stored properties die after its `deinit` body),
/// and in between it is read and written only under the lock, in ``withLock(_:)``.
@usableFromInline
// Unsafe: the value is reached through a pointer, only under the lock (test: LockStressTests)
struct LockedStorage<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    @usableFromInline
    let lock: PlatformLock
    // Unsafe: the value shares the lock's allocation and cache line (row: "receptionist → DispatchQueue", contention section)
    @usableFromInline let value: UnsafeMutablePointer<Value>

    @usableFromInline
    init(_ value: consuming Value) {
        lock = PlatformLock(followedBy: Value.self)
        // Unsafe: the value's place in the lock's allocation, after the primitive (row: "receptionist → DispatchQueue", contention section)
        let memory = UnsafeMutableRawPointer(lock.primitive) + PlatformLock.offset(of: Value.self)
        self.value = memory.bindMemory(to: Value.self, capacity: 1)
        self.value.initialize(to: value)
    }

    /// Runs `body` with the lock held.
    @inlinable
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value.pointee)
    }

    deinit {
        value.deinitialize(count: 1)
    }
}
