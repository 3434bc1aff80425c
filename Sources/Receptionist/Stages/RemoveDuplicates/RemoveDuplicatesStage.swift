/// Drops an element that `isDuplicate` says repeats the last element passed on.
@usableFromInline
final class RemoveDuplicatesStage<Element: Sendable>: StageNode {
    /// The last element passed on; `nil` before the first.
    @usableFromInline let last = Locked<Element?>(nil)
    @usableFromInline let isDuplicate: @Sendable (_ previous: Element?, _ current: Element) -> Bool
    @usableFromInline let downstream: StageInlet<Element>

    @inlinable
    init(
        downstream: StageInlet<Element>,
        isDuplicate: @escaping @Sendable (_ previous: Element?, _ current: Element) -> Bool
    ) {
        self.isDuplicate = isDuplicate
        self.downstream = downstream
    }

    @inlinable
    func receive(_ input: Element) {
        // The intake runs this stage one element at a time, so nothing changes `last` between
        // the read and the write; the user's predicate runs outside the lock.
        let previous = last.withLock { $0 }
        guard !isDuplicate(previous, input) else { return }
        let replaced = last.withLock { last in
            defer { last = input }
            return last
        }
        _ = replaced  // released outside the lock
        downstream.receive(input)
    }

    @inlinable
    func flush() { downstream.flush() }

    @inlinable
    func finish() { downstream.finish() }
}

extension Pipeline {
    /// Drops an output for which `isDuplicate(previous, output)` returns `true`, `previous`
    /// being the last output passed on. The first output always passes.
    ///
    /// `isDuplicate` runs as every stage does (see ``Pipeline``): one output at a time, in
    /// order, outside every lock.
    @inlinable
    public func removeDuplicates(
        by isDuplicate: @escaping @Sendable (_ previous: Output, _ current: Output) -> Bool
    ) -> Pipeline<Source, Output> {
        adding { downstream, _ in
            StageInlet(
                RemoveDuplicatesStage(downstream: downstream) { previous, current in
                    previous.map { isDuplicate($0, current) } ?? false
                }
            )
        }
    }

    /// Drops an output equal to the last output passed on.
    ///
    /// ```
    /// input     1  1  2  2  2  1  3  3
    /// removeDuplicates()
    /// output    1     2        1  3
    /// ```
    @inlinable
    public func removeDuplicates() -> Pipeline<Source, Output> where Output: Equatable {
        removeDuplicates(by: ==)
    }

    /// Drops a change that does not change the value: one whose new value equals the new value
    /// of the last change passed on or, for the first change, its own old value.
    ///
    /// Changes still form a chain after this stage (each `oldValue` is the previous `newValue`),
    /// since only changes that leave the value as it was are dropped. Needs
    /// ``ObservationOptions/new`` (the default); a change without a new value always passes.
    ///
    /// ```
    /// value set to   1  1  2  2  2  1  3
    /// removeDuplicates()
    /// delivered      1     2        1  3    (as 0→1, 1→2, 2→1, 1→3, from 0)
    /// ```
    @inlinable
    public func removeDuplicates<Object, Value: Equatable>() -> Pipeline<Source, Output>
    where Output == ObservedChange<Object, Value> {
        adding { downstream, _ in
            StageInlet(
                RemoveDuplicatesStage(downstream: downstream) { previous, current in
                    guard let new = current.newValue else { return false }
                    if let previous { return previous.newValue == new }
                    return current.oldValue == new
                }
            )
        }
    }
}
