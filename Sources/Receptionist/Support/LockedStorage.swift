/// One heap allocation that holds a ``PlatformLock`` primitive and the value it guards, for the
/// futex and portable implementations of ``Locked``. Owned by exactly one `Locked` (it is
/// `~Copyable`), so it is freed, and the value deinitialised, when that `Locked` dies — as
/// `Synchronization.Mutex` does with its value.
@usableFromInline
struct LockedStorage<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    // @unchecked: the value is reached through a pointer, only under the lock (`withLock`).
    @usableFromInline
    let lock: UnsafeMutablePointer<PlatformLock.Primitive>
    @usableFromInline
    let value: UnsafeMutablePointer<Value>

    /// Where the value starts in the allocation: after the lock, aligned for `Value`.
    private static var valueOffset: Int {
        let alignment = MemoryLayout<Value>.alignment
        return (MemoryLayout<PlatformLock.Primitive>.stride + alignment - 1) / alignment * alignment
    }

    @usableFromInline
    init(_ value: consuming Value) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: Self.valueOffset + MemoryLayout<Value>.size,
            alignment: Swift.max(MemoryLayout<PlatformLock.Primitive>.alignment, MemoryLayout<Value>.alignment)
        )
        lock = raw.bindMemory(to: PlatformLock.Primitive.self, capacity: 1)
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
