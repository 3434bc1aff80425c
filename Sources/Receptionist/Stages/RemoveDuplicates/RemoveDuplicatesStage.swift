/// Drops an element that repeats the last element passed on, as `isDuplicate` judges from the
/// `Key` it keeps of that element (the element itself, or for observed changes only the new
/// value: keeping the whole change would keep its model alive).
@usableFromInline
final class RemoveDuplicatesStage<Element: Sendable, Key: Sendable>: StageNode {
    /// What the stage keeps of the last element passed on; `nil` before the first.
    @usableFromInline let last = Locked<Key?>(nil)
    @usableFromInline let key: @Sendable (Element) -> Key
    @usableFromInline let isDuplicate: @Sendable (_ previous: Key?, _ current: Element) -> Bool
    @usableFromInline let downstream: StageInlet<Element>

    @usableFromInline
    init(
        downstream: StageInlet<Element>,
        key: @escaping @Sendable (Element) -> Key,
        isDuplicate: @escaping @Sendable (_ previous: Key?, _ current: Element) -> Bool
    ) {
        self.key = key
        self.isDuplicate = isDuplicate
        self.downstream = downstream
    }

    @inlinable
    func receive(_ input: Element) {
        // The intake runs this stage one element at a time, so nothing changes `last` between
        // the read and the write; the user's predicate runs outside the lock.
        let previous = last.withLock { $0 }
        assertNoLockHeld("running a removeDuplicates predicate")
        guard !isDuplicate(previous, input) else { return }
        let next = key(input)
        last.withLockThenRelease { last in
            let replaced = last
            last = next
            return ((), released: replaced)
        }
        downstream.receive(input)
    }

    @usableFromInline
    func flush() { downstream.flush() }

    @usableFromInline
    func finish() { downstream.finish() }
}
