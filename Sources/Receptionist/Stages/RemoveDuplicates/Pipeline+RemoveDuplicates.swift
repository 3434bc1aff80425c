extension Pipeline {
    /// Drops an output for which `isDuplicate(previous, output)` returns `true`, `previous`
    /// being the last output passed on. The first output always passes.
    ///
    /// `isDuplicate` runs as every stage does (see ``Pipeline``): one output at a time, in
    /// order, outside every lock. See <doc:Stages#removeDuplicates>.
    ///
    /// For observed changes, the overload for ``ObservedChange`` outputs is used instead, so that
    /// the stage does not keep the model alive (hence this one is disfavoured).
    @inlinable
    @_disfavoredOverload
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

    /// Drops a change for which `isDuplicate(previous, change)` returns `true`, `previous` being
    /// the last change passed on. The first change always passes.
    ///
    /// The stage keeps the values of the last change passed on, not the change: `previous` is
    /// rebuilt with the object and key path of `change`, so the stage does not keep the model
    /// alive. `isDuplicate` runs as every stage does (see ``Pipeline``): one change at a time, in
    /// order, outside every lock. See <doc:Stages#removeDuplicates>.
    @inlinable
    public func removeDuplicates<Object, Value>(
        by isDuplicate: @escaping @Sendable (_ previous: Output, _ current: Output) -> Bool
    ) -> Pipeline<Source, Output> where Output == ObservedChange<Object, Value> {
        adding("removeDuplicates(by:)") { downstream, _ in
            StageInlet(
                RemoveDuplicatesStage(downstream: downstream, key: DetachedChange.init) { previous, current in
                    previous.map { isDuplicate($0.attached(to: current), current) } ?? false
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

/// An observed change without its object and key path: what `removeDuplicates(by:)` keeps of the
/// last change it passed on, so that it does not keep the model alive.
@usableFromInline
struct DetachedChange<Value: Sendable>: Sendable {
    @usableFromInline let oldValue: Value?
    @usableFromInline let newValue: Value
    @usableFromInline let isInitial: Bool
    @usableFromInline let coalescedCount: Int

    @inlinable
    init<Object>(_ change: ObservedChange<Object, Value>) {
        oldValue = change.oldValue
        newValue = change.newValue
        isInitial = change.isInitial
        coalescedCount = change.coalescedCount
    }

    /// The change again, with the object and key path of `change` (the same for every change of
    /// one observation).
    @inlinable
    func attached<Object>(to change: ObservedChange<Object, Value>) -> ObservedChange<Object, Value> {
        ObservedChange(
            object: change.object, keyPath: change.keyPath, oldValue: oldValue, newValue: newValue,
            isInitial: isInitial, count: coalescedCount)
    }
}
