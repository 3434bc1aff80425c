extension Pipeline {
    /// Hands on a running result: `next(result, output)` for each output, starting from
    /// `initial`, as Combine's and `Sequence`'s `reduce` would step by step.
    ///
    /// ```swift
    /// let totals = Receptionist.pipeline(of: Int.self)
    ///     .scan(0) { total, amount in total + amount }
    ///     .deliver(on: .mainActor) { total in print(total) }
    /// ```
    ///
    /// `next` runs as every stage does (see ``Pipeline``): one output at a time, in order, outside
    /// every lock. See <doc:Stages#scan>.
    @inlinable
    public func scan<Result: Sendable>(
        _ initial: Result,
        _ next: @escaping @Sendable (_ result: Result, _ output: Output) -> Result
    ) -> Pipeline<Source, Result> {
        adding("scan(_:_:)") { downstream, _ in
            StageInlet(ScanStage(initial: initial, downstream: downstream, next: next))
        }
    }
}
