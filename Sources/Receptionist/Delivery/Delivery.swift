/// How outputs reach a task block: the target the drains are submitted to, the handler that runs
/// there, the buffer policy, and the merge of a coalescing pipeline.
///
/// Every public entry point that takes a target (a receptionist's initialiser, a pipeline's
/// `deliver`, a hub subscription, an observer added with a target) turns its target and task
/// block into one of these; everything after that is the same for every kind of target. The
/// kinds of target differ only in how the task block is called: a `@Sendable` block on a
/// ``DeliveryTarget`` (``init(on:buffering:_:)``), a `@MainActor` block on the main queue
/// (``mainActor(buffering:_:)``, in `MainActorTarget.swift`).
///
/// Adding a kind of target is one new file: the target type, its factory of `Delivery` values,
/// and its one-line public overloads (see `MainActorTarget.swift`). Other files touched: the
/// DocC landing page (`Receptionist.md`, Topics) and the README's table of targets.
@usableFromInline
struct Delivery<Element: Sendable>: Sendable {
    @usableFromInline
    typealias Handler = @Sendable (Element) -> Void

    @usableFromInline let target: any DeliveryTarget
    @usableFromInline let handler: Handler
    @usableFromInline var policy: BufferPolicy
    /// For a coalescing pipeline: how a new output is folded into the one still waiting.
    @usableFromInline var merge: ReceptionistStateMachine<Element>.Merge?
    /// How many task blocks a drain runs before it gives the target back.
    @usableFromInline var drainBudget = ReceptionistCore<Element>.defaultDrainBudget

    /// Delivery of `handler` on `target`.
    @usableFromInline
    init(on target: some DeliveryTarget, buffering policy: BufferPolicy, _ handler: @escaping Handler) {
        self.target = target
        self.handler = handler
        self.policy = policy
    }

    /// This delivery with `merge` folding outputs in its buffer (`nil`: unchanged).
    @usableFromInline
    func merging(with merge: ReceptionistStateMachine<Element>.Merge?) -> Delivery {
        guard let merge else { return self }
        var delivery = self
        delivery.merge = merge
        return delivery
    }

    /// The same target, policy and drain budget, running `handler` instead (without a merge).
    func handing<Other>(to handler: @escaping @Sendable (Other) -> Void) -> Delivery<Other> {
        var other = Delivery<Other>(on: target, buffering: policy, handler)
        other.drainBudget = drainBudget
        return other
    }

    /// The state machine of an engine that delivers this way.
    func makeMachine() -> ReceptionistStateMachine<Element> {
        ReceptionistStateMachine(policy: policy, merge: merge, handler: handler)
    }

    /// The delivery engine.
    @usableFromInline
    func makeCore() -> ReceptionistCore<Element> {
        ReceptionistCore(self)
    }
}
