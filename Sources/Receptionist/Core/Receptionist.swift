/// A trampoline: events sent from any thread are bounced, in order, to a task block that runs on
/// a target execution context.
///
/// Use it wherever something hands you values on a thread that is not the one that must handle
/// them: a callback API, a sensor driver, a notification, a completion handler.
///
/// ```swift
/// let receptionist = Receptionist<Double>(on: DispatchQueue.main) { reading in
///     print(reading)      // runs on the main queue, one reading at a time
/// }
/// Thread { receptionist.send(21.5) }.start()   // a callback on any thread
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
/// - **Batched hops:** a burst of events costs one submission to the target, not one per event,
///   with a budget per drain (<doc:ThreadingGuarantees#Where-code-runs>).
/// - **Cancel:** ``cancel()`` stops delivery at once, from any thread, also from the task block;
///   pending events are discarded and counted, the task block is released, and task blocks stop
///   as <doc:ThreadingGuarantees#Cancel-and-finish> says. Releasing the last reference to the
///   receptionist cancels it.
/// - **Re-entrancy:** the task block may send to this receptionist (the event is delivered after
///   the current block returns), cancel it, or create other receptionists. No internal lock is
///   held while it runs.
///
/// To filter, batch, throttle, debounce or coalesce events on the way, build the receptionist
/// with ``pipeline(of:)``.
public final class Receptionist<Event: Sendable>: DeliveryHandle {
    /// Where sent events go: straight to the delivery engine, or into a pipeline's stages.
    ///
    /// Strong references, in a noncopyable enum: `switch engine` then borrows the engine, where
    /// a copyable enum's payload is copied, a retain and a release on every `send` on a reference
    /// count that every producer thread writes (row "receptionist → DispatchQueue").
    @usableFromInline
    enum Engine: ~Copyable, Sendable {
        case direct(ReceptionistCore<Event>)
        case staged(StagedPipeline<Event>)
        case converting(ConvertingPipeline<Event>)
    }

    @usableFromInline
    let engine: Engine

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
        self.init(delivery: Delivery(on: target, buffering: policy, task))
    }

    /// Creates a receptionist whose watermarks count what its events weigh (bytes, say), not how
    /// many there are: flow control for a producer that thinks in bytes, as async-algorithms'
    /// water level per element does.
    ///
    /// ```swift
    /// let writer = Receptionist<[UInt8]>(
    ///     on: DispatchQueue(label: "disk"),
    ///     buffering: .watermarks(low: 256 * 1024, high: 1024 * 1024),
    ///     weighing: { $0.count }
    /// ) { chunk in print("writing", chunk.count, "bytes") }
    /// if writer.send([UInt8](repeating: 0, count: 4096)).shouldPause {
    ///     // stop reading until writer.onWritabilityChange(on:_:) says .writable
    /// }
    /// ```
    ///
    /// Everything ``BufferPolicy/watermarks(low:high:)`` says holds, with the level counted in
    /// weight: an event adds its weight from its `send` until its task block returned, `send`
    /// answers ``SendResult/acceptedAboveHighWatermark`` once the level is at or above `high`,
    /// and a paused producer is told to go on once it is down to `low`, checked after every task
    /// block. An event that weighs 0 never pauses anyone; one that weighs more than `high` pauses
    /// at once, and the producer resumes once it (and enough else) was delivered.
    ///
    /// - Parameters:
    ///   - target: where `task` runs.
    ///   - policy: a ``BufferPolicy/watermarks(low:high:)`` policy, its watermarks in weight; any
    ///     other policy stops the program with a message naming `weighing`.
    ///   - weighing: what an event weighs, at least 0 (a negative weight stops the program with a
    ///     message naming `weighing`). Called outside every lock, on the sending thread when the
    ///     event is sent and again on the target before its task block, so it must give the same
    ///     answer each time and be cheap (a count, not an encoding).
    ///   - task: the task block. Runs on `target`, one event at a time, in order.
    public convenience init(
        on target: some DeliveryTarget,
        buffering policy: BufferPolicy,
        weighing: @escaping @Sendable (Event) -> Int,
        _ task: @escaping @Sendable (Event) -> Void
    ) {
        self.init(delivery: Delivery(on: target, buffering: policy, task), weighing: weighing)
    }

    /// A receptionist without stages whose events `weighing` weighs (any target).
    @usableFromInline
    convenience init(delivery: Delivery<Event>, weighing: @escaping @Sendable (Event) -> Int) {
        Self.validateWeighing(delivery.policy, in: "Receptionist(on:buffering:weighing:_:)")
        var delivery = delivery
        delivery.weighing = Weighing(weighing)
        self.init(delivery: delivery)
    }

    /// Stops the program unless `policy` is one a weighing can apply to.
    @usableFromInline
    static func validateWeighing(_ policy: BufferPolicy, in function: String) {
        validate(
            policy.kind == .watermarks,
            "\(function): weighing applies to a .watermarks(low:high:) policy, whose level it counts; got \(policy)")
    }

    /// A receptionist without stages.
    @usableFromInline
    init(delivery: Delivery<Event>) {
        engine = .direct(delivery.makeCore())
    }

    /// A receptionist whose events go through `stages`.
    @usableFromInline
    init(stages: StagedPipeline<Event>) {
        engine = .staged(stages)
    }

    /// A receptionist whose events are converted on the sending thread, then delivered.
    @usableFromInline
    init(converting pipeline: ConvertingPipeline<Event>) {
        engine = .converting(pipeline)
    }

    /// The engine, for everything but `send`.
    private var control: any ReceptionistEngine {
        switch engine {
        case .direct(let core): core
        case .staged(let stages): stages
        case .converting(let pipeline): pipeline
        }
    }

    /// Neither finishing nor ended.
    var isActive: Bool { control.isActive }

    /// The delivery engine at the end, whatever the stages.
    var deliveryControl: any DeliveryControl { control.deliveryControl }

    deinit {
        control.ownerReleased()
    }

    /// Hands `event` to the receptionist. Callable from any thread.
    ///
    /// Never runs the task block while holding a lock; with ``DeliveryTarget/immediate`` it may
    /// run task blocks on this thread before returning. It does not block, except with a
    /// ``BufferPolicy/waiting(capacity:)`` buffer that is full: then it waits for room, or is
    /// refused where waiting could deadlock (<doc:ThreadingGuarantees#Back-pressure>; from async
    /// code, use ``sendSuspending(_:)``).
    ///
    /// - Returns: what became of `event`: accepted (and, with a
    ///   ``BufferPolicy/watermarks(low:high:)`` buffer, whether to pause), an older event evicted
    ///   for it, folded into a waiting one, dropped, or refused and why (see ``SendResult``).
    ///   `if receptionist.send(event).isAccepted` asks whether it will be delivered.
    @inlinable
    @discardableResult
    public func send(_ event: consuming Event) -> SendResult {
        switch engine {
        case .direct(let core): core.send(event)
        case .staged(let stages): stages.send(event)
        case .converting(let pipeline): pipeline.send(event)
        }
    }

    /// Hands `events` to the receptionist, in order, in one step: one lock step for all of them,
    /// where ``send(_:)`` takes one per event, and one answer.
    ///
    /// ```swift
    /// let lines: [String] = socketRead()
    /// if receptionist.send(contentsOf: lines).shouldPause { pauseReading() }
    /// ```
    ///
    /// Callable from any thread. `events` is iterated first, on this thread, before any lock of
    /// the library is taken. The events are then buffered together: no other thread's event
    /// lands between them, and each is delivered as if sent by ``send(_:)`` in turn (the buffer
    /// policy applies to each: a dropping buffer may drop or evict some, a coalescing one folds
    /// them). Two shapes take them one at a time, as ``send(_:)`` would, and so may let other
    /// threads' events in between: a ``BufferPolicy/waiting(capacity:)`` buffer, which waits
    /// for room event by event (and may block, as ``send(_:)`` does), and a pipeline whose
    /// stages' intake has a dropping policy. Never runs a task block while holding a lock; with
    /// ``DeliveryTarget/immediate`` it may run task blocks on this thread before returning.
    ///
    /// - Returns: how many were kept, and the one answer to act on (a refusal if the
    ///   receptionist had ended, a pause if the level reached the high watermark at any of them,
    ///   otherwise the last one's answer): see ``SendContentsResult``.
    @inlinable
    @discardableResult
    public func send(contentsOf events: some Sequence<Event>) -> SendContentsResult {
        // Iterated before any lock: a sequence may run code of its own (a lazy `map`).
        let events = Array(events)
        switch engine {
        case .direct(let core): return core.send(contentsOf: events)
        case .staged(let stages): return stages.send(contentsOf: events)
        case .converting(let pipeline): return pipeline.sendContents(events)
        }
    }

    /// Hands `event` to the receptionist from async code: with a
    /// ``BufferPolicy/waiting(capacity:)`` buffer that is full, suspends the calling task until
    /// there is room, instead of blocking its thread as ``send(_:)`` would. With any other policy,
    /// it is ``send(_:)``.
    ///
    /// **Task cancellation** ends the wait: a `sendSuspending` suspended for room returns
    /// `false` as soon as its task is cancelled, and the event is not sent (it was never taken, so
    /// it is not counted as dropped either). A task that is already cancelled still sends when
    /// there is room, and returns `false` at once when there is none.
    ///
    /// Suspending holds no thread, actor or queue, so unlike ``send(_:)`` it is never refused for
    /// where it runs; with stages and a waiting policy, it does not run them on its thread either
    /// (they run on the library's stage queue). See <doc:ThreadingGuarantees#Back-pressure>.
    ///
    /// - Returns: what became of `event`, as for ``send(_:)``; refused if the receptionist was
    ///   cancelled or finished (also while waiting), or if the task was cancelled while waiting
    ///   (``SendResult/Refusal/taskCancelled``).
    @inlinable
    @discardableResult
    public func sendSuspending(_ event: Event) async -> SendResult {
        switch engine {
        case .direct(let core): await core.sendSuspending(event)
        case .staged(let stages): await stages.sendSuspending(event)
        case .converting(let pipeline): await pipeline.sendSuspending(event)
        }
    }

    /// Runs `resume` once on `target`, with the state, as soon as producers may send again (the
    /// backlog of a paused ``BufferPolicy/watermarks(low:high:)`` buffer fell to its low
    /// watermark: ``Writability/writable``) or the receptionist ended (``Writability/ended(_:)``:
    /// cancelled, finished or released; the producer's next send is refused); at once (submitted
    /// to `target`) if producers are not paused, also with any other policy.
    ///
    /// A producer that pauses once per pause registers here once per pause; one that pauses and
    /// resumes many times is better served by a persistent handler,
    /// ``onWritabilityChange(on:_:)`` (<doc:ThreadingGuarantees#Flow-control>):
    ///
    /// ```swift
    /// if receptionist.send(message).shouldPause {
    ///     source.pause()
    ///     receptionist.whenWritable(on: sourceQueue) { state in
    ///         if state == .writable { source.resume() } else { source.close() }
    ///     }
    /// }
    /// ```
    ///
    /// - `resume` runs exactly once, on `target`, submitted after every lock of the library is
    ///   released (with ``DeliveryTarget/immediate``: on the thread whose drain took the backlog
    ///   down to the low watermark, right after the task block that did, or on the thread that
    ///   cancelled or finished). Blocks registered by several producers all run at that moment.
    /// - **Cancel and finish:** a block still waiting runs, with ``Writability/ended(_:)``, in
    ///   the call to ``cancel()`` or ``finish()`` (or as the receptionist is released), not once
    ///   a finish has delivered everything. So a paused producer is never left waiting for ever.
    ///
    /// - Parameters:
    ///   - target: where `resume` runs: the producer's own context (its event loop, queue, the
    ///     main actor).
    ///   - resume: the producer's block, given the state it was called for.
    public func whenWritable(on target: some DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {
        control.whenWritable(on: target, resume)
    }

    /// Calls `handler` on `target` with the current writability, then with every change of it,
    /// in order and never the same state twice in a row, until ``Writability/ended(_:)``, its
    /// last call (then the handler is released), or ``WritabilityListener/cancel()``.
    ///
    /// The shape of swift-nio's `channelWritabilityChanged`: one handler for the whole life of
    /// the producer, so no block per pause and no resume for a pause that is already over.
    ///
    /// ```swift
    /// receptionist.onWritabilityChange(on: sourceQueue) { state in
    ///     switch state {
    ///     case .writable: source.resume()
    ///     case .paused: source.pause()
    ///     case .ended: source.close()
    ///     }
    /// }
    /// ```
    ///
    /// Calls are submitted to `target` after every lock of the library is released and never
    /// overlap (a change signalled while the previous call runs waits for it). A producer that
    /// keeps sending after ``SendResult/acceptedAboveHighWatermark`` loses nothing; it only
    /// delays its ``Writability/writable``.
    @discardableResult
    public func onWritabilityChange(
        on target: some DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        control.onWritabilityChange(on: target, handler)
    }

    /// What producers are told now: ``Writability/paused`` from the send that answered
    /// ``SendResult/acceptedAboveHighWatermark`` until the elements held and not yet delivered
    /// are down to the low watermark of the ``BufferPolicy/watermarks(low:high:)`` buffer;
    /// ``Writability/ended(_:)`` from the call to ``cancel()`` or ``finish()`` on (or once
    /// released); ``Writability/writable`` otherwise. A snapshot: poll it only where a callback
    /// cannot reach you.
    public var writability: Writability {
        control.writability
    }

    /// Makes every stage hand on what it holds now (a partial batch, a held throttle value, a
    /// pending debounce value), to be delivered after the outputs already produced.
    ///
    /// Callable from any thread; the pipeline keeps running. Does nothing for a receptionist
    /// without stages, or after ``cancel()`` or ``finish()``. Like `send`, it may run the stages
    /// on this thread (with a ``BufferPolicy/waiting(capacity:)`` buffer they run on the library's
    /// stage queue); it never waits for room (<doc:ThreadingGuarantees#Back-pressure>).
    public func flush() {
        control.flush()
    }

    /// Stops accepting events; those already accepted are still delivered (stages hand on what
    /// they hold, as with ``flush()``), then the task block is released.
    ///
    /// Idempotent. Has no effect after ``cancel()``. The receptionist may be released right
    /// after: releasing a finishing receptionist does not cancel it.
    public func finish() {
        control.finish()
    }

    /// Finishes as ``finish()`` does, and calls `completion` once every event it accepted was
    /// delivered (or dropped by its policy) and the task block was released — or once it was
    /// cancelled instead. Runs at once, on this thread, if the receptionist already ended;
    /// otherwise on the thread that ends it: usually the target's, after the last task block; on
    /// a cancel, the cancelling thread, as ``cancel()`` returns, when a task block already
    /// started on another thread may still be running
    /// (<doc:ThreadingGuarantees#Cancel-and-finish>).
    public func finish(completion: @escaping @Sendable () -> Void) {
        control.deliveryControl.whenEnded(completion)
        control.finish()
    }

    /// Stops delivery at once and discards pending events (counted in
    /// ``ReceptionistStatistics/discarded``).
    ///
    /// Idempotent; callable from any thread, including from inside the task block. Which task
    /// blocks may still start once it returns, and when the task block is released:
    /// <doc:ThreadingGuarantees#Cancel-and-finish>. Has no effect after the receptionist finished.
    public func cancel() {
        control.cancel()
    }

    /// Whether ``cancel()`` stopped the receptionist (a cancel after it finished has no effect).
    public var isCancelled: Bool {
        control.isCancelled
    }

    /// Whether the receptionist ended after ``finish()``: everything it accepted was delivered
    /// (or dropped by its policy) and the task block was released.
    public var isFinished: Bool {
        control.isFinished
    }

    /// Counts of events received, delivered, dropped and discarded; see
    /// ``ReceptionistStatistics``. With stages, they count the outputs of the last stage (for
    /// example batches), as they travel to the task block.
    public var statistics: ReceptionistStatistics {
        control.statistics
    }
}

/// What a ``Receptionist`` needs of its engine besides `send`: the delivery engine itself, or a
/// pipeline's stages in front of it.
protocol ReceptionistEngine: DeliveryControl {
    func flush()
    /// See ``Receptionist/whenWritable(on:_:)``.
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void)
    /// See ``Receptionist/onWritabilityChange(on:_:)``.
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener
    /// See ``Receptionist/writability``.
    var writability: Writability { get }
    func finish()
    func ownerReleased()
    /// Neither finishing nor ended.
    var isActive: Bool { get }
    /// The delivery engine at the end.
    var deliveryControl: any DeliveryControl { get }
}

extension DeliveryEngine: ReceptionistEngine where Guard: ~Copyable {
    /// Nothing to hand on: an engine has no stages.
    func flush() {}

    var deliveryControl: any DeliveryControl { self }
}

extension StagedPipeline: ReceptionistEngine {
    var deliveryControl: any DeliveryControl { delivery }
}

extension ConvertingPipeline: ReceptionistEngine {
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {
        delivery.whenWritable(on: target, resume)
    }
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        delivery.onWritabilityChange(on: target, handler)
    }
    var writability: Writability { delivery.writability }
}
