// The harness's own shared state (the hop counter, the memory sampler, the consumer's error log,
// the producers' end time) behind one lock that every platform the package supports has.
// `Synchronization.Mutex`/`Atomic` need macOS 15 / iOS 18 / tvOS 18 / watchOS 11 / visionOS 2;
// the hand-written floors keep them (Baselines.swift, gated with `@available`), because they are
// what a user would write on Linux, but the harness must run every other row below that.

import Foundation

/// A value and the `NSLock` that guards it.
final class Protected<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read and written inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
