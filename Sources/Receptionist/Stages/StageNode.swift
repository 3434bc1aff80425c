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

/// A node that arms timers through ``StageTimers``.
@usableFromInline
protocol TimedStageNode: AnyObject, Sendable {
    /// The timer armed with `generation` fired. Called by the intake, like ``StageNode/receive(_:)``.
    func timerFired(generation: Int)
}

/// What a time-based state machine asks of its timer.
@usableFromInline
enum TimerAction: Equatable, Sendable {
    /// Leave the timer as it is.
    case none
    /// Arm a timer for `deadline`, replacing (and cancelling) any armed one.
    case arm(at: SchedulerInstant, generation: Int)
    /// Cancel the armed timer.
    case disarm
}

/// A node that runs a user closure on each element (filter, map): no state, nothing to flush.
@usableFromInline
final class TransformStage<Input: Sendable, Output: Sendable>: StageNode {
    let transform: @Sendable (Input) -> Output?
    let downstream: any StageNode<Output>

    init(downstream: any StageNode<Output>, transform: @escaping @Sendable (Input) -> Output?) {
        self.transform = transform
        self.downstream = downstream
    }

    @usableFromInline
    func receive(_ input: Input) {
        if let output = transform(input) { downstream.receive(output) }
    }

    @usableFromInline
    func flush() { downstream.flush() }

    @usableFromInline
    func finish() { downstream.finish() }
}

/// The end of every staged pipeline: hands each output to the delivery receptionist, which
/// bounces it to the target.
@usableFromInline
final class DeliveryStage<Output: Sendable>: StageNode {
    let core: ReceptionistCore<Output>

    init(core: ReceptionistCore<Output>) {
        self.core = core
    }

    @usableFromInline
    func receive(_ input: Output) {
        core.send(input)
    }

    @usableFromInline
    func flush() {}

    @usableFromInline
    func finish() { core.finish() }
}
