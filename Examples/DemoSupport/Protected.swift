import Foundation

/// A value and the lock that guards it: the demos' shared state, read and changed from any thread.
///
/// ```swift
/// let produced = Protected(0)
/// produced.withLock { $0 += 1 }           // from any thread
/// let total = produced.withLock { $0 }    // a copy, read under the lock
/// ```
///
/// It is the same idea as `Synchronization.Mutex` (macOS 15, iOS 18), over Foundation's `NSLock`,
/// so that the demos run on every platform the package supports (macOS 13, iOS 16). Where
/// `Mutex` is available it can replace this type one for one.
///
/// Keep critical sections short and never call out of them: no user closure, no `queue.sync`,
/// nothing that could lock this value again (the lock is not recursive).
public final class Protected<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read and written inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    /// Creates the lock and the value it guards.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value, on the calling thread, and returns what
    /// `body` returns. Other threads that call `withLock` meanwhile wait until `body` returns.
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
