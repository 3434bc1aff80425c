/// Hands on a running result: the previous result combined with each element.
@usableFromInline
final class ScanStage<Element: Sendable, Result: Sendable>: StageNode {
    /// The result so far.
    @usableFromInline let result: Locked<Result>
    @usableFromInline let next: @Sendable (Result, Element) -> Result
    @usableFromInline let downstream: StageInlet<Result>

    @usableFromInline
    init(initial: Result, downstream: StageInlet<Result>, next: @escaping @Sendable (Result, Element) -> Result) {
        self.result = Locked(initial)
        self.next = next
        self.downstream = downstream
    }

    @inlinable
    func receive(_ input: Element) {
        // The intake runs this stage one element at a time, so nothing changes `result` between
        // the read and the write; the user's closure runs outside the lock.
        let current = result.withLock { $0 }
        assertNoLockHeld("running a scan closure")
        let updated = next(current, input)
        result.withLockThenRelease { result in
            let replaced = result
            result = updated
            return ((), released: replaced)
        }
        downstream.receive(updated)
    }

    @usableFromInline
    func flush() { downstream.flush() }

    @usableFromInline
    func finish() { downstream.finish() }
}
