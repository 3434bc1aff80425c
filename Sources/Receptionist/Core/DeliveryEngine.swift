import Dispatch

/// The delivery engine shared by every kind of receptionist: a locked pending buffer, one drain
/// at a time on the target, a budget per drain, cancellation and statistics.
///
/// Threading:
/// - ``send(_:)`` may be called from any thread; it never calls user code under the lock.
///   ``enqueue(_:)`` may be called while the caller holds a lock of its own (an observation's
///   writes feed its stages' intake under the model's lock, `StagesIntake`); when it says so,
///   the caller submits the drain after releasing that lock. (An observation's own engine is fed
///   under the model's lock through `MachineCell.enqueue`, which shares the machine.)
/// - The drain runs on the target (`DeliveryEngine+Drain.swift`). It takes a segment of up to
///   its budget of elements under the lock (a reference move, see `SegmentedQueue`), then runs
///   the handler on each outside the lock, checking the cancellation flag before each one.
/// - Handlers, evicted and discarded elements are released outside the lock, because their
///   deinitialisers are user code (``Locked/withLockThenRelease(_:)``).
///
/// Generic over where its state machine lives (``MachineGuard``): a receptionist's engine owns
/// its lock (``ReceptionistCore``); an observation's engine shares its model's lock.
@usableFromInline
final class DeliveryEngine<Element: Sendable, Guard: MachineGuard<Element> & ~Copyable>: Sendable {
    @usableFromInline
    typealias Handler = ReceptionistStateMachine<Element>.Handler

    /// The default number of task blocks a drain runs before it gives the target back.
    @usableFromInline
    static var defaultDrainBudget: Int { 256 }

    // Layout: the fields senders only read, then the state senders write under the lock, then
    // the counters the drain writes per task block, a cache line away from the state: otherwise
    // the drain's store of `deliveredCount` after every task block and the senders' writes
    // under the lock share a cache line and keep evicting each other's copy (false sharing,
    // which slows every send under a flood, with one producer as with two).
    @usableFromInline
    let target: any DeliveryTarget
    @usableFromInline
    let drainsInline: Bool
    @usableFromInline
    let drainBudget: Int
    /// For an inline core: where a drain continues once it used its budget and more is pending,
    /// instead of keeping the sending thread (which others' sends would otherwise hold hostage).
    /// `nil`: the inline drain goes on until the buffer is empty.
    @usableFromInline
    let overflowTarget: (any DeliveryTarget)?
    /// Whether the buffer folds elements together (it has a merge).
    @usableFromInline
    let coalesces: Bool
    /// Whether the policy drops new elements when full (so it never evicts an older one).
    @usableFromInline
    let dropsNewest: Bool
    /// Whether the policy makes senders wait for room (``BufferPolicy/waiting(capacity:)``).
    @usableFromInline
    let waits: Bool
    /// Whether the policy pauses producers and calls them back (``BufferPolicy/watermarks(low:high:)``),
    /// so that a drain must look for callbacks to run as it takes elements.
    @usableFromInline
    let signalsWritability: Bool
    /// For a ``signalsWritability`` engine given a weighing (``Delivery/weighing``): what each
    /// element weighs against the watermarks, and what those delivered weighed. ``weighs`` is
    /// `weighing != nil`, stored: testing the optional reference itself retains and releases it.
    @usableFromInline
    let weighing: Weighing<Element>?
    @usableFromInline
    let weighs: Bool
    /// Marks the task blocks of this engine's drains, so that a send from one of them is not made
    /// to wait for room the drain itself would make; only for a policy that ``waits`` (no other
    /// engine's sends ever wait, so nothing else reads a mark).
    @usableFromInline
    let drainMark: DrainMark?
    /// For a waiting pipeline's intake: how many elements its drains may take, given what waits
    /// behind the stages; a drain that may take none parks (``DrainGate``). `nil` elsewhere.
    @usableFromInline
    let gate: DrainGate?
    /// For a waiting pipeline's intake: where its senders must not wait for room either, because
    /// the delivery behind the stages could not make room meanwhile (its drains or context).
    @usableFromInline
    let refusesWaiting: (@Sendable () -> Bool)?
    @usableFromInline
    let state: Guard
    private let padding = CacheLinePadding()
    /// Set (under the state lock) by cancel; read by the drain before each task block.
    @usableFromInline
    let cancelledFlag = AtomicValue<Bool>(false)
    /// Task blocks that returned. Written only by the drain (drains are serialised by the state
    /// machine), read by ``statistics`` under the state lock. A drain reads its starting value
    /// when it starts: it was scheduled by a locked step later than the previous drain's last
    /// locked step, which that drain took after its last store (or it resumes, through the
    /// target or the ``DrainGate``'s flag, the same drain, which stored before handing itself on).
    @usableFromInline
    let deliveredCount = AtomicValue<Int>(0)
    /// For a ``signalsWritability`` engine: the delivered count at which a paused producer may go
    /// on (``ReceptionistStateMachine/resumeThreshold``, `Int.max` when not paused), stored under
    /// the lock whenever it may have changed and read by the drain after each task block, so that
    /// the resume comes at the low watermark, not at the drain's next segment. A stale read is
    /// never too late: while paused the threshold only rises, and a drain that reaches a stale one
    /// takes the lock and reads the true one.
    @usableFromInline
    let resumeAt = AtomicValue<Int>(.max)
    /// Where the drain reads the time for ``ReceptionistStatistics/Timing``.
    @usableFromInline
    let clock: DeliveryClock
    /// Whether the drain times every task block against ``MainThreadBudget`` (on the main thread).
    @usableFromInline
    let watchesMainThreadBudget: Bool
    /// What the drains measured, written by the drain only and read by ``statistics`` as one
    /// record: see ``ReceptionistStatistics/Timing``.
    @usableFromInline
    let drainTiming = DrainTiming()

    /// - Parameters:
    ///   - delivery: the target, policy, merge and drain budget (the handler is in the machine).
    ///   - state: the machine, made from `delivery`, behind its lock.
    ///   - overflowTarget: for an ``ImmediateTarget``: where a drain continues after its budget.
    ///   - gate: for a waiting pipeline's intake: the ``DrainGate`` its drains take input through.
    ///   - refusesWaiting: for a waiting pipeline's intake: where its senders must not wait
    ///     either (see ``waitingHereCouldDeadlock``).
    ///   - marksDrains: mark the drains' task blocks (``DrainMark``) even though this engine's
    ///     own senders never wait: a waiting pipeline's delivery, whose task blocks must not wait
    ///     for room at the pipeline's intake.
    @usableFromInline
    init(
        _ delivery: Delivery<Element>,
        state: consuming Guard,
        overflowTarget: (any DeliveryTarget)? = nil,
        gate: DrainGate? = nil,
        refusesWaiting: (@Sendable () -> Bool)? = nil,
        marksDrains: Bool = false
    ) {
        precondition(
            delivery.drainBudget >= 1, "Receptionist: drainBudget must be at least 1, got \(delivery.drainBudget)")
        self.state = state
        self.target = delivery.target
        self.drainsInline = delivery.target is ImmediateTarget
        self.clock = delivery.clock
        self.watchesMainThreadBudget = delivery.watchesMainThreadBudget
        self.overflowTarget = overflowTarget
        self.coalesces = delivery.merge != nil
        // A coalescing drain delivers one change per turn on its target: going on at once, it took
        // each change the moment it was made, and folded almost none (ThreadingGuarantees, "Where
        // code runs").
        self.drainBudget = coalesces && !drainsInline ? 1 : delivery.drainBudget
        self.dropsNewest = delivery.policy.kind == .dropNewest
        self.waits = delivery.policy.kind == .waiting
        self.signalsWritability = delivery.policy.kind == .watermarks
        self.weighing = delivery.weighing
        self.weighs = delivery.weighing != nil
        self.gate = gate
        self.refusesWaiting = refusesWaiting
        drainMark = waits || marksDrains ? DrainMark() : nil
        if waits || marksDrains { (delivery.target as? any ContextAware)?.prepareContextCheck() }
    }

    /// Buffers `element` without waiting, even in a full ``BufferPolicy/waiting(capacity:)``
    /// buffer: for what a pipeline's intake must take whatever its fill (timer fires, flushes).
    ///
    /// - Returns: `false` if the receptionist no longer accepts changes.
    @inlinable
    func sendExceedingCapacity(_ element: consuming Element) -> Bool {
        // Moved into the lock, not copied (a closure cannot consume what it captures): a copy of
        // an element that holds references costs a retain and a release each.
        let weight = self.weight(of: element)
        var moving = Optional(element)
        let (action, wake) = state.withLockThenRelease { machine in
            machine.weighedIn &+= weight
            let (action, _, evicted) = machine.enqueue(moving.take()!, exceedingCapacity: true)
            publishFlow(machine)
            return ((action, machine.waitersToWake()), released: evicted)
        }
        for waiter in wake { waiter.wake() }
        if action == .submitDrain { submitDrain() }
        return action != .rejected
    }

    /// Buffers `element`, while the caller may hold a lock of its own (an observation's writes
    /// feed its stages' intake under the model's lock: `StagesIntake`). Never calls user code.
    ///
    /// - Returns: whether a drain must be submitted (call ``submitDrain()`` once, after releasing
    ///   any lock of your own), whether the element was accepted, and an element the buffer
    ///   policy evicted (or `element` itself, when it was not kept), which the caller must
    ///   release after releasing its own lock.
    @inlinable
    func enqueue(_ element: consuming Element) -> EnqueueOutcome {
        // Moved into the lock, not copied: a copy of an element that holds references costs a
        // retain and a release each (an `ObservedChange` holds two).
        let weight = self.weight(of: element)
        var moving = Optional(element)
        let (action, evicted, wake) = state.withLock { machine in
            if signalsWritability { refreshLevel(&machine) }
            machine.weighedIn &+= weight
            let (action, _, evicted) = machine.enqueue(moving.take()!)
            publishFlow(machine)
            return (action, evicted, machine.waitersToWake())
        }
        return EnqueueOutcome(action: action, evicted: evicted, wake: wake)
    }

    @usableFromInline
    struct EnqueueOutcome {
        @usableFromInline
        let action: ReceptionistStateMachine<Element>.EnqueueAction
        @usableFromInline
        let evicted: Element?
        /// Changes of writability to signal after the caller's lock (``Waiter/wake()`` each).
        @usableFromInline
        let wake: [Waiter]

        @inlinable
        init(action: ReceptionistStateMachine<Element>.EnqueueAction, evicted: Element?, wake: [Waiter]) {
            self.action = action
            self.evicted = evicted
            self.wake = wake
        }

        @inlinable
        var needsDrain: Bool { action == .submitDrain }
    }

    /// Buffers `element` and submits a drain if needed; with an inline target, runs the drain.
    ///
    /// - Returns: what became of `element` (see ``SendResult``).
    @inlinable
    @discardableResult
    func send(_ element: consuming Element) -> SendResult {
        if waits { return sendOrWait(element) }
        if signalsWritability { return sendFlowControlled(element) }
        var moving = Optional(element)
        if drainsInline {
            let outcome = state.withLockThenRelease { $0.claimOrEnqueue(moving.take()!) }
            switch consume outcome {
            case .claimed(let handler, let element):
                drain(from: .claimed(element, handler))
                return .accepted
            case .enqueued(let action, let result):
                if action == .submitDrain { submitDrain() }
                return result
            }
        }
        let (action, result) = state.withLockThenRelease { machine in
            let (action, result, evicted) = machine.enqueue(moving.take()!)
            return ((action, result), released: evicted)
        }
        if action == .submitDrain { submitDrain() }
        return result
    }

    /// Buffers `elements`, in order, in one lock step, and submits a drain if needed; with a
    /// ``BufferPolicy/waiting(capacity:)`` buffer, one at a time as ``send(_:)`` does, up to the
    /// first refusal. See ``SendContentsResult`` for the answer.
    @inlinable
    @discardableResult
    func send(contentsOf elements: [Element]) -> SendContentsResult {
        if waits, !elements.isEmpty {
            var result = SendContentsResult(nothingSentAnswering: .accepted)
            for element in elements {
                result = result.adding(sendOrWait(element))
                if case .refused = result.result { break }
            }
            return SendContentsResult(count: elements.count, accepted: result.accepted, result: result.result)
        }
        let weight = weighs ? elements.reduce(0) { $0 &+ self.weight(of: $1) } : 0
        let (action, result, wake) = state.withLockThenRelease { machine in
            if signalsWritability { refreshLevel(&machine) }
            machine.weighedIn &+= weight
            let (action, result, evicted) = machine.enqueue(contentsOf: elements)
            publishFlow(machine)
            return ((action, result, machine.waitersToWake()), released: evicted)
        }
        for waiter in wake { waiter.wake() }
        if action == .submitDrain { submitDrain() }
        return result
    }

    /// Sends into a ``BufferPolicy/watermarks(low:high:)`` buffer: the level is brought up to
    /// date first (what the drain delivered, what waits behind a pipeline's stages), so that the
    /// answer counts what is really undelivered; a change of writability is signalled after the
    /// lock.
    @inlinable
    func sendFlowControlled(_ element: consuming Element) -> SendResult {
        let weight = self.weight(of: element)
        var moving = Optional(element)
        let (action, result, wake) = state.withLockThenRelease { machine in
            refreshLevel(&machine)
            machine.weighedIn &+= weight
            let (action, result, evicted) = machine.enqueue(moving.take()!)
            publishFlow(machine)
            return ((action, result, machine.waitersToWake()), released: evicted)
        }
        for waiter in wake { waiter.wake() }
        if action == .submitDrain { submitDrain() }
        return result
    }

    /// Under the lock, for a ``signalsWritability`` engine: what the drain delivered so far and
    /// what waits behind the stages (with a ``gate``), into the machine's level.
    @inlinable
    func refreshLevel(_ machine: inout ReceptionistStateMachine<Element>) {
        machine.noteDelivered(deliveredLevel, heldBehind: gate?.heldPastIntake)
    }

    /// What the drain delivered so far, in the level's unit: task blocks, or for an engine that
    /// ``weighs``, their elements' weight.
    @inlinable
    var deliveredLevel: Int {
        weighs ? weighing!.delivered.load(ordering: .relaxed) : deliveredCount.load(ordering: .relaxed)
    }

    /// What `element` adds to the machine's ``ReceptionistStateMachine/weighedIn``: its weight
    /// for an engine that ``weighs`` (the user's weighing, outside every lock), 0 otherwise.
    @inlinable
    func weight(of element: Element) -> Int {
        weighs ? weighing!.weight(of: element) : 0
    }

    /// Under the lock, after a step that may have changed the level or the state: what the
    /// drain (``resumeAt``) and the gate (``DrainGate/producersPaused``) read without it.
    ///
    /// A weighed engine's threshold is a weight, which its ``Weighing`` holds: ``resumeAt`` is then
    /// 0 while paused, so that the drain asks ``reachedResumeThreshold(delivered:)`` after every
    /// task block (the unweighed drain's check stays one comparison).
    @inlinable
    func publishFlow(_ machine: borrowing ReceptionistStateMachine<Element>) {
        guard signalsWritability else { return }
        if let weighing {
            // Releasing: a drain that reads the 0 with acquiring order (``reachedResumeThreshold``)
            // then reads this threshold, not an older one.
            weighing.resumeAt.store(machine.resumeThreshold, ordering: .relaxed)
            resumeAt.store(machine.flow.isPaused ? 0 : .max, ordering: .releasing)
        } else {
            resumeAt.store(machine.resumeThreshold, ordering: .relaxed)
        }
        gate?.producersPaused.store(machine.flow.isPaused, ordering: .relaxed)
    }

    /// The drain's task blocks reached ``resumeAt``: for a weighed engine, whether what they
    /// weighed reached its threshold; then, under the lock, whether the producers may go on.
    @usableFromInline
    @inline(never)
    func reachedResumeThreshold(delivered: Int) {
        guard let weighing else { return recheckWritability(delivered: delivered) }
        // Synchronises with ``publishFlow(_:)``'s store of the 0 that brought the drain here.
        _ = resumeAt.load(ordering: .acquiring)
        let weight = weighing.delivered.load(ordering: .relaxed)
        guard weight >= weighing.resumeAt.load(ordering: .relaxed) else { return }
        recheckWritability(delivered: weight)
    }

    /// The drain's task blocks reached ``resumeAt`` (or a pipeline's delivery handed on what
    /// waited behind its stages): checks, under the lock, whether the paused producers may go on.
    ///
    /// - Parameter delivered: what the drain delivered, in the level's unit (``deliveredLevel``).
    @usableFromInline
    func recheckWritability(delivered: Int? = nil) {
        let wake = state.withLock { machine in
            machine.noteDelivered(delivered ?? deliveredLevel, heldBehind: gate?.heldPastIntake)
            publishFlow(machine)
            return machine.waitersToWake()
        }
        for waiter in wake { waiter.wake() }
    }

    /// See ``Receptionist/whenWritable(on:_:)``: `callback` is submitted to `target`, with the
    /// state, after every lock is released.
    func whenWritable(on target: any DeliveryTarget, _ callback: @escaping @Sendable (Writability) -> Void) {
        let wake = state.withLock { machine in
            if signalsWritability { refreshLevel(&machine) }
            machine.whenWritable { state in target.submit { callback(state) } }
            publishFlow(machine)
            return machine.waitersToWake()
        }
        for waiter in wake { waiter.wake() }
    }

    /// See ``Receptionist/onWritabilityChange(on:_:)``.
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        let listener = WritabilityListener(on: target, handler)
        let wake = state.withLock { machine in
            machine.addListener(listener)
            return machine.waitersToWake()
        }
        for waiter in wake { waiter.wake() }
        return listener
    }

    /// See ``Receptionist/writability``.
    var writability: Writability {
        let wake = state.withLock { machine in
            if signalsWritability {
                refreshLevel(&machine)
                publishFlow(machine)
            }
            return (machine.writability, machine.waitersToWake())
        }
        for waiter in wake.1 { waiter.wake() }
        return wake.0
    }

    /// See ``Receptionist/isWritable``.
    var isWritable: Bool { writability == .writable }

    /// Hands a drain to the target. Call exactly once per `.submitDrain` outcome.
    @inlinable
    func submitDrain() {
        // On `.immediate` the drain runs here, as `ImmediateTarget.submit` would run it, without
        // a closure to allocate for it.
        if drainsInline { drain() } else { target.submit { self.drain() } }
    }

    /// Counts an input dropped in front of the delivery, in a pipeline's stages; see
    /// ``ReceptionistStateMachine/recordDroppedInput()``.
    @usableFromInline
    func recordDroppedInput() {
        state.withLock { $0.recordDroppedInput() }
    }

    /// Stops delivery; pending changes are discarded and the handler is released.
    ///
    /// Idempotent and callable from any thread, including from inside the handler. Once it
    /// returns, no handler call starts, except the one a drain on another thread had already
    /// committed to (it checked the flag before this call set it).
    @usableFromInline
    func cancel() {
        let (completions, wake) = state.withLockThenRelease { machine in
            let released = machine.cancel()
            if released != nil { cancelledFlag.store(true, ordering: .releasing) }
            return ((machine.takeCompletionsIfEnded(), machine.waitersToWake()), released: released)
        }
        for waiter in wake { waiter.wake() }
        for completion in completions { completion() }
    }

    /// What the owner's `deinit` does: cancel, unless ``finish()`` was called, in which case the
    /// pending changes are still delivered (the drains keep the core alive until then).
    @usableFromInline
    func ownerReleased() {
        if lifecycle == .active { cancel() }
    }

    /// Stops accepting changes; what is pending is still delivered, then the handler is released.
    @usableFromInline
    func finish() {
        finish(completion: nil)
    }

    /// Finishes, and runs `completion` once the receptionist ended; see
    /// ``Receptionist/finish(completion:)``.
    func finish(completion: (@Sendable () -> Void)?) {
        let (completions, wake) = state.withLockThenRelease { machine in
            if let completion { machine.onEnd(completion) }
            let handler = machine.finish()
            return ((machine.takeCompletionsIfEnded(), machine.waitersToWake()), released: handler)
        }
        for waiter in wake { waiter.wake() }
        for completion in completions { completion() }
    }

    /// Runs `completion` once the receptionist ended (finished, everything delivered, or
    /// cancelled): at once, on this thread, if it already has; otherwise on the thread that ends
    /// it: after the last task block for a finish; as `cancel()` returns for a cancel, while a
    /// task block a drain had already started on another thread may still run.
    func whenEnded(_ completion: @escaping @Sendable () -> Void) {
        let completions = state.withLock { machine in
            machine.onEnd(completion)
            return machine.takeCompletionsIfEnded()
        }
        for completion in completions { completion() }
    }

    /// Runs the completions of a receptionist that ended.
    @usableFromInline
    func runCompletions() {
        let completions = state.withLock { $0.takeCompletionsIfEnded() }
        for completion in completions { completion() }
    }

    /// Accepts `last` as the final element and stops accepting, atomically: no element sent by
    /// another thread can slip in after it. What is pending is delivered, then the handler is
    /// released.
    func finish(appending last: Element) {
        let (needsDrain, wake) = state.withLockThenRelease { machine in
            let outcome = machine.finish(appending: last)
            // Senders waiting for room are refused now, not when the drain next takes a segment.
            return ((outcome.needsDrain, machine.waitersToWake()), released: outcome.evicted)
        }
        for waiter in wake { waiter.wake() }
        if needsDrain { submitDrain() }
    }

    /// What a send that is not accepted answers now: refused, because cancelled or finished.
    @usableFromInline
    var refusal: SendResult { state.withLock { $0.refusal } }

    @usableFromInline
    var isCancelled: Bool { cancelledFlag.load(ordering: .acquiring) }

    @usableFromInline
    var isFinished: Bool { lifecycle == .finished }

    /// Neither finishing nor ended.
    @usableFromInline
    var isActive: Bool { lifecycle == .active }

    var lifecycle: ReceptionistStateMachine<Element>.Lifecycle {
        state.withLock { $0.lifecycle }
    }

    /// The counters, read under the lock, then the timing: one record of the drain's figures
    /// (``DrainTiming``) and the clock read with it, at which the oldest undelivered change the
    /// lock step saw is aged.
    @usableFromInline
    var statistics: ReceptionistStatistics {
        let (statistics, oldest) = state.withLock { machine in
            let delivered = deliveredCount.load(ordering: .relaxed)
            return (machine.statistics(delivered: delivered), machine.oldestUndeliveredStartedAt(delivered: delivered))
        }
        let measured = drainTiming.read(clock)
        func duration(_ nanoseconds: Int) -> Duration? { nanoseconds == 0 ? nil : .nanoseconds(nanoseconds) }
        // The clock was read after the lock: at least as late as the stamp, so never negative.
        let age = oldest.flatMap {
            $0 == 0 ? nil : Duration.nanoseconds(Swift.max(0, Int64(truncatingIfNeeded: measured.now &- $0)))
        }
        return statistics.with(
            timing: ReceptionistStatistics.Timing(
                oldestPendingAge: age,
                lastWait: duration(measured.lastWait),
                longestWait: duration(measured.longestWait),
                longestTaskBlock: duration(measured.longestTaskBlock),
                longestDrain: duration(measured.longestDrain)))
    }
}

/// A receptionist's delivery engine: its machine behind a lock of its own.
@usableFromInline
typealias ReceptionistCore<Element: Sendable> = DeliveryEngine<Element, OwnedMachine<Element>>

extension DeliveryEngine where Guard == OwnedMachine<Element> {
    /// An engine with a lock of its own, delivering as `delivery` says.
    ///
    /// - Parameters: as ``init(_:state:overflowTarget:gate:refusesWaiting:marksDrains:)``.
    @usableFromInline
    convenience init(
        _ delivery: Delivery<Element>,
        overflowTarget: (any DeliveryTarget)? = nil,
        gate: DrainGate? = nil,
        refusesWaiting: (@Sendable () -> Bool)? = nil,
        marksDrains: Bool = false
    ) {
        self.init(
            delivery, state: OwnedMachine(delivery.makeMachine()), overflowTarget: overflowTarget, gate: gate,
            refusesWaiting: refusesWaiting, marksDrains: marksDrains)
    }

}
