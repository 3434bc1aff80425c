/// One stage of a running pipeline: a filter, a batcher, a throttle… or the delivery at the end.
///
/// Threading: a pipeline's intake (``StagedPipeline``) calls its nodes one event at a time, in
/// order, on whichever thread is draining the intake, never while a lock of the library is held.
/// A node may therefore run user closures and call its downstream node directly. Nodes keep their
/// mutable state in a ``Locked`` value anyway: it is uncontended, and it lets the compiler check
/// that they are `Sendable`.
@usableFromInline
protocol StageNode<Input>: AnyObject, Sendable {
    associatedtype Input: Sendable

    /// An element from upstream.
    func receive(_ input: Input)

    /// Hand on whatever the stage holds (a partial batch, a held throttle value, a pending
    /// debounce value) now, then flush downstream.
    func flush()

    /// Upstream ended: hand on whatever the stage holds, then finish downstream.
    func finish()
}

/// How a stage reaches the next one: closures over the next node.
///
/// Not `any StageNode`: the closures are formed in inlinable code, where the node's type is
/// known, so the per-element path is specialised for the client's element types (a call through
/// an existential would run the node's generic code, which looks up type metadata at run time
/// on every element).
@usableFromInline
struct StageInlet<Element: Sendable>: Sendable {
    @usableFromInline let receive: @Sendable (Element) -> Void
    @usableFromInline let flush: @Sendable () -> Void
    @usableFromInline let finish: @Sendable () -> Void

    @inlinable
    init<Node: StageNode>(_ node: Node) where Node.Input == Element {
        receive = { node.receive($0) }
        flush = { node.flush() }
        finish = { node.finish() }
    }
}

/// A node that runs a user closure on each element (filter, map): no state, nothing to flush.
@usableFromInline
final class TransformStage<Input: Sendable, Output: Sendable>: StageNode {
    @usableFromInline let transform: @Sendable (Input) -> Output?
    @usableFromInline let downstream: StageInlet<Output>

    @usableFromInline
    init(downstream: StageInlet<Output>, transform: @escaping @Sendable (Input) -> Output?) {
        self.transform = transform
        self.downstream = downstream
    }

    @inlinable
    func receive(_ input: Input) {
        assertNoLockHeld("running a stage closure")
        if let output = transform(input) { downstream.receive(output) }
    }

    @usableFromInline
    func flush() { downstream.flush() }

    @usableFromInline
    func finish() { downstream.finish() }
}

/// The end of every staged pipeline (but a waiting one, ``WeighedDeliveryStage``): hands each
/// output to the delivery receptionist, which bounces it to the target. Should the delivery
/// refuse an output while it still accepts, the output is counted as received and dropped, never
/// lost silently.
@usableFromInline
final class DeliveryStage<Output: Sendable>: StageNode {
    @usableFromInline let core: ReceptionistCore<Output>

    @usableFromInline
    init(core: ReceptionistCore<Output>) {
        self.core = core
    }

    @inlinable
    func receive(_ input: Output) {
        // A dropping buffer counts its own drops; only a refusal must be counted here.
        if case .refused = core.send(input), core.isActive { core.recordDroppedInput() }
    }

    @usableFromInline
    func flush() {}

    @usableFromInline
    func finish() { core.finish() }
}

/// An output of a ``BufferPolicy/waiting(capacity:)`` pipeline on its way to the task block, with
/// the number of inputs it stands for (see ``DrainGate``).
@usableFromInline
struct Weighed<Output: Sendable>: Sendable {
    @usableFromInline let output: Output
    @usableFromInline let weight: Int

    @inlinable
    init(output: Output, weight: Int) {
        self.output = output
        self.weight = weight
    }
}

/// The end of a ``BufferPolicy/waiting(capacity:)`` pipeline: weighs each output (the inputs the
/// stages took since the previous one) and hands it to the unbounded delivery behind the
/// ``DrainGate``, which never makes the stages wait.
@usableFromInline
final class WeighedDeliveryStage<Output: Sendable>: StageNode {
    @usableFromInline let core: ReceptionistCore<Weighed<Output>>
    @usableFromInline let gate: DrainGate

    @usableFromInline
    init(core: ReceptionistCore<Weighed<Output>>, gate: DrainGate) {
        self.core = core
        self.gate = gate
    }

    @inlinable
    func receive(_ input: Output) {
        let weight = gate.weigh()
        guard core.send(Weighed(output: input, weight: weight)).isAccepted else {
            // Not accepted (the delivery stopped): its weight waits for nothing.
            gate.handedOver(weight)
            if core.isActive { core.recordDroppedInput() }
            return
        }
    }

    @usableFromInline
    func flush() {}

    @usableFromInline
    func finish() { core.finish() }
}
