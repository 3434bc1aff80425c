extension Pipeline {
    /// Passes on only the outputs for which `isIncluded` returns `true`.
    ///
    /// `isIncluded` runs as every stage does (see ``Pipeline``): one output at a time, in order,
    /// on the thread that made the change (or a time-based stage's scheduler), outside every
    /// lock.
    /// See <doc:Stages#filter-map-compactMap>.
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Output) -> Bool) -> Pipeline<Source, Output> {
        adding("filter(_:)") { downstream, _ in
            StageInlet(TransformStage(downstream: downstream) { isIncluded($0) ? $0 : nil })
        }
    }

    /// Passes on `transform` of each output.
    ///
    /// `transform` runs as every stage does (see ``Pipeline``): one output at a time, in order,
    /// outside every lock.
    @inlinable
    public func map<Next: Sendable>(_ transform: @escaping @Sendable (Output) -> Next) -> Pipeline<Source, Next> {
        adding("map(_:)") { downstream, _ in
            StageInlet(TransformStage(downstream: downstream) { transform($0) })
        }
    }

    /// Passes on the non-`nil` results of `transform`.
    ///
    /// `transform` runs as every stage does (see ``Pipeline``): one output at a time, in order,
    /// outside every lock.
    @inlinable
    public func compactMap<Next: Sendable>(_ transform: @escaping @Sendable (Output) -> Next?) -> Pipeline<Source, Next>
    {
        adding("compactMap(_:)") { downstream, _ in
            StageInlet(TransformStage(downstream: downstream, transform: transform))
        }
    }
}
