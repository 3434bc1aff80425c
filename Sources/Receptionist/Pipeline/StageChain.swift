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

    /// Present only for a chain whose stages are all the library's own conversions (no user code,
    /// no state, such as the wrapping `coalesce()` adds): the sending thread can convert each
    /// element and hand it to the delivery itself, without an intake in front of the stages.
    @usableFromInline
    let converting: (@Sendable (Input) -> Output)?

    @usableFromInline
    init(
        build: @escaping Build,
        direct: (@Sendable (Delivery<Output>) -> Delivery<Input>)?,
        converting: (@Sendable (Input) -> Output)? = nil
    ) {
        self.build = build
        self.direct = direct
        self.converting = converting
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

    /// This chain followed by `convert`, a conversion of the library's own: stateless, no user
    /// code, safe to run on several sending threads at once. A chain of such conversions keeps
    /// ``converting``.
    @usableFromInline
    func appendingConversion<Next: Sendable>(
        _ convert: @escaping @Sendable (Output) -> Next
    ) -> StageChain<Input, Next> {
        let build = self.build
        var composed: (@Sendable (Input) -> Next)?
        if let previous = converting {
            composed = { (input: Input) -> Next in convert(previous(input)) }
        }
        return StageChain<Input, Next>(
            build: { (downstream: StageInlet<Next>, timers: StageTimers) -> StageInlet<Input> in
                let stage = TransformStage<Output, Next>(downstream: downstream) { convert($0) }
                return build(StageInlet(stage), timers)
            },
            direct: nil,
            converting: composed
        )
    }
}

extension StageChain where Input == Output {
    /// The chain of a source without stages.
    @usableFromInline
    static var empty: StageChain<Input, Input> {
        StageChain(build: { downstream, _ in downstream }, direct: { $0 }, converting: { $0 })
    }
}
