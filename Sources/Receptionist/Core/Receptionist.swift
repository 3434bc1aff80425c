/// A trampoline: events sent from any thread are bounced, in order, to a task block that runs on
/// a target execution context.
///
/// Use it wherever something hands you values on a thread that is not the one that must handle
/// them: a callback API, a sensor driver, a notification, a completion handler.
///
/// ```swift
/// let receptionist = Receptionist<Reading>(on: DispatchQueue.main) { reading in
///     label.text = reading.description      // runs on the main queue, one reading at a time
/// }
/// sensor.onReading = { reading in receptionist.send(reading) }   // any thread
/// ```
///
/// ## Threading contract
/// - **Where:** the task block runs on the target: a `DispatchQueue`, an `OperationQueue`, the
///   main actor (``MainActorTarget/mainActor``), synchronously on the sending thread
///   (``DeliveryTarget/immediate``), or any ``DeliveryTarget``.
/// - **Order:** task blocks run one at a time, in the order the `send` calls took effect (their
///   order on the receptionist's lock; sends from one thread keep that thread's order), even on
///   a concurrent queue.
/// - **Lossless by default:** with ``BufferPolicy/unbounded`` every accepted event is delivered
///   exactly once. A bounded policy drops events only as it says, and counts each one in
///   ``ReceptionistStatistics/dropped``.
/// - **Batched hops:** a burst of events costs one submission to the target, not one per event.
///   A drain runs at most 256 task blocks, then resubmits itself, so a flood cannot starve other
///   work on the target (for example the main queue); ``ImmediateTarget`` has no budget.
/// - **Cancel:** ``cancel()`` is idempotent and may be called from any thread, including from
///   inside the task block. Once it returns, no task block starts, except one that a drain on
///   another thread had already started; pending events are discarded and counted in
///   ``ReceptionistStatistics/discarded``. The task block is released at once, or when a drain
///   running on another thread returns. Releasing the last reference to the receptionist cancels
///   it.
/// - **Re-entrancy:** the task block may send to this receptionist (the event is delivered after
///   the current block returns), cancel it, or create other receptionists. No internal lock is
///   held while it runs.
///
/// To filter, batch, throttle, debounce or coalesce events on the way, build the receptionist
/// with ``pipeline(of:)``.
public final class Receptionist<Event: Sendable>: Sendable {
    /// The delivery receptionist, when events go straight to it.
    @usableFromInline
    let core: ReceptionistCore<Event>?
    /// The stages events go through, for a receptionist made by ``pipeline(of:)`` with stages.
    @usableFromInline
    let pipeline: StagedPipeline<Event>?

    /// Creates a receptionist that runs `task` on `target` for every event sent to it.
    ///
    /// - Parameters:
    ///   - target: where `task` runs.
    ///   - policy: how many events may wait for `task`, and which to drop beyond that.
    ///   - task: the task block. Runs on `target`, one event at a time, in order.
    public convenience init(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (Event) -> Void
    ) {
        self.init(core: ReceptionistCore(target: target, policy: policy, handler: task))
    }

    /// Creates a receptionist whose task block is isolated to the main actor.
    ///
    /// - Parameters:
    ///   - target: ``MainActorTarget/mainActor``.
    ///   - policy: how many events may wait for `task`, and which to drop beyond that.
    ///   - task: the task block. Runs on the main actor, one event at a time, in order.
    public convenience init(
        on target: MainActorTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (Event) -> Void
    ) {
        self.init(
            core: ReceptionistCore(target: MainActorTarget.queue, policy: policy) { event in
                MainActor.assumeIsolated { task(event) }
            }
        )
    }

    /// Test hook: a receptionist with a custom drain budget.
    package convenience init(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy = .unbounded,
        drainBudget: Int,
        _ task: @escaping @Sendable (Event) -> Void
    ) {
        self.init(core: ReceptionistCore(target: target, policy: policy, drainBudget: drainBudget, handler: task))
    }

    @usableFromInline
    init(core: ReceptionistCore<Event>) {
        self.core = core
        self.pipeline = nil
    }

    @usableFromInline
    init(pipeline: StagedPipeline<Event>) {
        self.core = nil
        self.pipeline = pipeline
    }

    deinit {
        if let core { core.ownerReleased() } else { pipeline.unsafelyUnwrapped.ownerReleased() }
    }

    /// Hands `event` to the receptionist. Callable from any thread.
    ///
    /// Never blocks on the target and never runs the task block while holding a lock; with
    /// ``DeliveryTarget/immediate`` it may run task blocks on this thread before returning.
    ///
    /// - Returns: `false` if the receptionist was cancelled or finished and ignored the event;
    ///   `true` if it accepted it (a bounded policy may still drop it, and counts it).
    @inlinable
    @discardableResult
    public func send(_ event: consuming Event) -> Bool {
        // Not `if let`: binding retains and releases the core on every send, two atomic
        // operations on a cache line every producer shares.
        if core != nil { return core.unsafelyUnwrapped.send(event) }
        return pipeline.unsafelyUnwrapped.send(event)
    }

    /// Makes every stage hand on what it holds now (a partial batch, a held throttle value, a
    /// pending debounce value), to be delivered after the outputs already produced.
    ///
    /// Callable from any thread; the pipeline keeps running. Does nothing for a receptionist
    /// without stages, or after ``cancel()`` or ``finish()``.
    public func flush() {
        pipeline?.flush()
    }

    /// Stops accepting events; those already accepted are still delivered (stages hand on what
    /// they hold, as with ``flush()``), then the task block is released.
    ///
    /// Idempotent. Has no effect after ``cancel()``. The receptionist may be released right
    /// after: releasing a finishing receptionist does not cancel it.
    public func finish() {
        if let core { core.finish() } else { pipeline.unsafelyUnwrapped.finish() }
    }

    /// Stops delivery at once and discards pending events.
    ///
    /// Idempotent; callable from any thread, including from inside the task block. Once it
    /// returns no task block starts, except one already started by a drain on another thread.
    /// The task block (and everything it captured) is released, at once or when a drain running
    /// on another thread returns. Has no effect after the receptionist finished.
    public func cancel() {
        if let core { core.cancel() } else { pipeline.unsafelyUnwrapped.cancel() }
    }

    /// Whether ``cancel()`` stopped the receptionist (a cancel after it finished has no effect).
    public var isCancelled: Bool { core?.isCancelled ?? pipeline.unsafelyUnwrapped.isCancelled }

    /// Whether the receptionist ended after ``finish()``: everything it accepted was delivered
    /// (or dropped by its policy) and the task block was released.
    public var isFinished: Bool { core.map { $0.lifecycle == .finished } ?? pipeline.unsafelyUnwrapped.isFinished }

    /// Counts of events received, delivered, dropped and discarded; see
    /// ``ReceptionistStatistics``. With stages, they count the outputs of the last stage (for
    /// example batches), as they travel to the task block.
    public var statistics: ReceptionistStatistics { core?.statistics ?? pipeline.unsafelyUnwrapped.statistics }
}
