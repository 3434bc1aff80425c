/// How to build the nodes of a pipeline's stages, from the delivery end backwards.
///
/// A ``Pipeline`` is a description: nothing runs until `deliver`. Each operator appends a
/// function that wraps the downstream stage in its own node.
@usableFromInline
struct StageChain<Input: Sendable, Output: Sendable>: Sendable {
    @usableFromInline
    typealias Build = @Sendable (_ downstream: StageInlet<Output>, _ timers: StageTimers) -> StageInlet<Input>

    @usableFromInline
    let build: Build

    /// Present only for a chain without stages (`Input == Output`): the delivery can then take the
    /// source's elements itself, without an intake.
    @usableFromInline
    let direct: (@Sendable (Delivery<Output>) -> Delivery<Input>)?

    @usableFromInline
    init(build: @escaping Build, direct: (@Sendable (Delivery<Output>) -> Delivery<Input>)?) {
        self.build = build
        self.direct = direct
    }

    /// This chain followed by `stage`.
    @usableFromInline
    func appending<Next: Sendable>(
        _ stage: @escaping @Sendable (_ downstream: StageInlet<Next>, _ timers: StageTimers) -> StageInlet<Output>
    ) -> StageChain<Input, Next> {
        let build = self.build
        return StageChain<Input, Next>(
            build: { downstream, timers in build(stage(downstream, timers), timers) }, direct: nil)
    }
}

extension StageChain where Input == Output {
    /// The chain of a source without stages.
    @usableFromInline
    static var empty: StageChain<Input, Input> {
        StageChain(build: { downstream, _ in downstream }, direct: { $0 })
    }
}
