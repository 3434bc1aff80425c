extension Pipeline {
    /// Drops an output for which `isDuplicate(previous, output)` returns `true`, `previous`
    /// being the last output passed on. The first output always passes.
    ///
    /// `isDuplicate` runs as every stage does (see ``Pipeline``): one output at a time, in
    /// order, outside every lock. See <doc:Stages#removeDuplicates>.
    @inlinable
    public func removeDuplicates(
        by isDuplicate: @escaping @Sendable (_ previous: Output, _ current: Output) -> Bool
    ) -> Pipeline<Source, Output> {
        adding("removeDuplicates(by:)") { downstream, _ in
            StageInlet(
                RemoveDuplicatesStage(downstream: downstream, key: { $0 }) { previous, current in
                    previous.map { isDuplicate($0, current) } ?? false
                }
            )
        }
    }

    /// Drops an output equal to the last output passed on; see <doc:Stages#removeDuplicates>.
    @inlinable
    public func removeDuplicates() -> Pipeline<Source, Output> where Output: Equatable {
        removeDuplicates(by: ==)
    }

    /// Drops a change that does not change the value: one whose new value equals the new value
    /// of the last change passed on or, for the first change, its own old value.
    ///
    /// Changes still form a chain after this stage (each `oldValue` is the previous `newValue`),
    /// since only changes that leave the value as it was are dropped. The stage keeps the last new value, not the change, so it does not keep the model alive.
    /// See <doc:Stages#removeDuplicates>.
    @inlinable
    public func removeDuplicates<Object, Value: Equatable>() -> Pipeline<Source, Output>
    where Output == ObservedChange<Object, Value> {
        adding("removeDuplicates()") { downstream, _ in
            StageInlet(
                RemoveDuplicatesStage(downstream: downstream, key: \.newValue) { previous, current in
                    if let previous { return previous == current.newValue }
                    return current.oldValue == current.newValue
                }
            )
        }
    }
}
