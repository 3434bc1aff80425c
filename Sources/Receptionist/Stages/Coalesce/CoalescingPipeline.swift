/// A pipeline whose last stage coalesces: at most one output waits for the task block; outputs
/// made while it waits are folded into it.
///
/// Created by `coalesce()` (``Pipeline/coalesce()->CoalescingPipeline<Source,Output>`` for observed changes, ``Pipeline/coalesce()->CoalescingPipeline<Source,Coalesced<Output>>`` for other outputs); start it with `deliver(on:)`. Coalescing is the last
/// stage because it is decided by the task block's pace: it happens in the buffer in front of
/// the target.
///
/// ## Threading contract
/// - The task block runs on the target, one output at a time, in order. While it runs (or while
///   a delivery waits for the target), outputs are folded into one waiting output; when the task
///   block can take the next one, it gets the latest state, never a backlog. The buffer in
///   front of the target holds one output however fast the producers are (the changes waiting
///   to enter earlier stages, if there are any, are not bounded: see ``Pipeline``).
/// - The last output is always delivered: coalescing only ever folds an output into a later one.
/// - Cancel, finish and flush are as for ``Pipeline``.
public struct CoalescingPipeline<Source: PipelineSource, Output: Sendable>: Sendable {
    @usableFromInline
    let pipeline: Pipeline<Source, Output>
    @usableFromInline
    let merge: ReceptionistStateMachine<Output>.Merge

    @inlinable
    init(pipeline: Pipeline<Source, Output>, merge: @escaping ReceptionistStateMachine<Output>.Merge) {
        self.pipeline = pipeline
        self.merge = merge
    }

    @inlinable
    func core(on target: some DeliveryTarget, _ task: @escaping @Sendable (Output) -> Void) -> ReceptionistCore<Output>
    {
        ReceptionistCore(target: target, policy: .unbounded, merge: merge, handler: task)
    }

    @inlinable
    func core(onMainActor task: @escaping @MainActor (Output) -> Void) -> ReceptionistCore<Output> {
        ReceptionistCore(target: MainActorTarget.queue, policy: .unbounded, merge: merge) { output in
            MainActor.assumeIsolated { task(output) }
        }
    }

    /// Starts the observation; `task` runs on `target` with the latest change each time it can
    /// take one. See ``CoalescingPipeline`` and ``Pipeline`` for the contract.
    ///
    /// - Returns: the token that keeps the observation alive.
    @inlinable
    public func deliver<Object, Value>(
        on target: some DeliveryTarget,
        _ task: @escaping @Sendable (Output) -> Void
    ) -> ObservationToken where Source == ObservedProperty<Object, Value> {
        pipeline.start(core(on: target, task))
    }

    /// Starts the observation with a task block isolated to the main actor.
    @inlinable
    public func deliver<Object, Value>(
        on target: MainActorTarget,
        _ task: @escaping @MainActor (Output) -> Void
    ) -> ObservationToken where Source == ObservedProperty<Object, Value> {
        pipeline.start(core(onMainActor: task))
    }

    /// Starts the pipeline; returns the receptionist to send events to. `task` runs on `target`
    /// with the latest output each time it can take one.
    @inlinable
    public func deliver<Event>(
        on target: some DeliveryTarget,
        _ task: @escaping @Sendable (Output) -> Void
    ) -> Receptionist<Event> where Source == ReceptionistInput<Event> {
        pipeline.start(core(on: target, task))
    }

    /// Starts the pipeline with a task block isolated to the main actor.
    @inlinable
    public func deliver<Event>(
        on target: MainActorTarget,
        _ task: @escaping @MainActor (Output) -> Void
    ) -> Receptionist<Event> where Source == ReceptionistInput<Event> {
        pipeline.start(core(onMainActor: task))
    }
}

extension Pipeline {
    /// Delivers only the latest output, with how many it stands for: at most one output waits
    /// for the task block at a time; one made while another waits replaces it.
    ///
    /// ```
    /// input        a  b  c        d        e  f
    /// task block   [a ]   [c(2)      ]  [d ] [f(2)]     (busy while in brackets)
    /// ```
    @inlinable
    @_disfavoredOverload  // observed changes have their own overload, which must win without a type annotation
    public func coalesce() -> CoalescingPipeline<Source, Coalesced<Output>> {
        CoalescingPipeline(pipeline: map { Coalesced(latest: $0, count: 1) }) { $0.absorb(&$1) }
    }

    /// Delivers only the latest state of the property: at most one change waits for the task
    /// block at a time; a change made while one waits is folded into it. The delivered change
    /// has the `oldValue` of the first change it stands for, the `newValue` of the last, and
    /// their number in ``ObservedChange/coalescedCount``.
    ///
    /// Delivered changes still form a chain, and the last one delivered carries the final value.
    ///
    /// ```
    /// value set to  1  2  3        4        5  6
    /// task block    [0→1]  [1→3 (2)   ]  [3→4] [4→6 (2)]   (busy while in brackets)
    /// ```
    @inlinable
    public func coalesce<Object, Value>() -> CoalescingPipeline<Source, Output>
    where Output == ObservedChange<Object, Value> {
        CoalescingPipeline(pipeline: self) { $0.absorb(&$1) }
    }
}
