import Dispatch

/// The decisions of a receptionist, as a plain value: events in, actions out.
///
/// A ``DeliveryEngine`` keeps one of these behind a lock (its own `Locked`, or its model's lock
/// for an observation: ``MachineGuard``), calls one `mutating func` per event under the lock, and performs the returned action (submitting a drain, running task blocks,
/// releasing elements and the handler) after the lock is released.
///
/// Invariants:
/// - a non-empty buffer in the `active` or `finishing` state always has a drain scheduled;
/// - at most one drain is scheduled or running at any time (`isDrainScheduled`), which is what
///   makes delivery serial even on a concurrent target;
/// - once `cancelled` or `finished`, nothing is accepted and the handler is gone.
@usableFromInline
struct ReceptionistStateMachine<Element> {
    @usableFromInline
    typealias Handler = @Sendable (Element) -> Void

    @usableFromInline
    enum Lifecycle: Equatable, Sendable {
        /// Accepting and delivering changes.
        case active
        /// No longer accepting; delivering what is pending, then `finished`.
        case finishing
        /// Everything accepted was delivered (or dropped); the handler is released.
        case finished
        /// Pending changes were discarded; the handler is released.
        case cancelled
    }

    /// What the caller of ``enqueue(_:exceedingCapacity:)`` must do; what became of the element
    /// is its ``SendResult``.
    @usableFromInline
    enum EnqueueAction: Equatable, Sendable {
        /// The element is buffered (or dropped by policy); a drain is already scheduled.
        case none
        /// The element is buffered and the caller must submit a drain to the target.
        case submitDrain
        /// The receptionist is cancelled or finishing; the element was not accepted.
        case rejected
        /// The buffer is full and its policy makes senders wait: the element was not accepted
        /// (it is handed back); wait for room and send it again.
        case full
    }

    @usableFromInline
    enum DrainAction: Sendable {
        /// The oldest elements of the buffer (no more than the drain's budget), in a segment now
        /// owned by the drain: run the handler on each, in order, then give the emptied segment
        /// back with ``giveBack(_:)``.
        case deliver(BufferSegment<Element>, Handler)
        /// The drain used its budget and more is pending: submit a new drain and return.
        case yield
        /// Nothing left to do; the drain ends. `ended`: the receptionist ended (finished or
        /// cancelled), so the completions waiting for that can run.
        case stop(ended: Bool)
    }

    @usableFromInline var lifecycle: Lifecycle = .active
    @usableFromInline var isDrainScheduled = false
    @usableFromInline var buffer: SegmentedQueue<Element>
    @usableFromInline var handler: Handler?
    @usableFromInline let policy: BufferPolicy
    /// The policy's capacity, or `Int.max` for ``BufferPolicy/unbounded`` and
    /// ``BufferPolicy/watermarks(low:high:)``: stored, so that the per-change checks compare two
    /// integers instead of unwrapping an optional.
    @usableFromInline let capacity: Int
    /// What producers are told (``Writability``): paused at the high watermark of a
    /// ``BufferPolicy/watermarks(low:high:)`` buffer, writable again at its low one, ended once the
    /// receptionist stops accepting. Fed the ``level`` after every change of it.
    @usableFromInline var flow: WatermarkStrategy
    /// How many task blocks had returned when the drain last said so (``noteDelivered(_:)``): the
    /// level counts an element until its task block returned. For a machine that ``weighs``, the
    /// weight of the elements whose task blocks returned.
    @usableFromInline var deliveredReported = 0
    /// For a pipeline's intake: the elements behind the stages, in outputs not yet handed to their
    /// task block (the ``DrainGate``'s weight), as last read under this lock.
    @usableFromInline var heldBehind = 0
    /// Whether the level counts weights (a ``Delivery/weighing`` was given) instead of elements.
    @usableFromInline let weighs: Bool
    /// For a machine that ``weighs``: the weight of every element sent so far, added by the engine
    /// before each ``enqueue(_:exceedingCapacity:)`` (a weighed buffer has watermarks, so keeps
    /// every element while it accepts any); the level is this less the weight whose task blocks
    /// returned (``deliveredReported``, then a weight).
    @usableFromInline var weighedIn = 0
    /// The producers' persistent handlers (``Receptionist/onWritabilityChange(on:_:)``).
    var listeners: [WritabilityListener] = []
    /// The producers' one-shot blocks (``Receptionist/whenWritable(on:_:)``), each already bound
    /// to its target: they run at the next ``Writability/writable`` or ``Writability/ended(_:)``.
    var writableCallbacks: [@Sendable (Writability) -> Void] = []
    /// What the last changes of writability must run after the lock (the one-shot blocks, the
    /// listeners' drains), handed out by ``waitersToWake()``.
    @usableFromInline var signalled: [Waiter] = []
    /// For a coalescing receptionist: folds a new element into the one still waiting, in place,
    /// so that at most one is ever pending. Library code only (it runs under the lock).
    @usableFromInline let merge: Merge?
    /// `merge != nil`, stored: testing the optional closure itself retains and releases it.
    @usableFromInline let coalesces: Bool

    /// Folds `new` into `pending` in place and leaves in `new` what the fold let go of, which
    /// the caller releases outside the lock.
    @usableFromInline
    typealias Merge = @Sendable (_ pending: inout Element, _ new: inout Element) -> Void

    @usableFromInline var received = 0
    @usableFromInline var dropped = 0
    private var discarded = 0
    @usableFromInline var coalesced = 0
    @usableFromInline var maxPending = 0
    /// Elements in segments taken by drains, minus those a cancelled drain did not run.
    @usableFromInline var handedOut = 0
    /// When the oldest element of the segment the drain was handed last was buffered (its
    /// ``BufferSegment/startedAt``); 0 when the drain's last step handed out none (or the segment
    /// was not stamped). Counts while the drain has not delivered all it was handed
    /// (``oldestUndeliveredStartedAt(delivered:)``): a drain that parks with its segment emptied
    /// keeps it, and the next step clears it.
    @usableFromInline var handedOutSince: UInt64 = 0
    /// What waits for the receptionist to end.
    private var completions: [@Sendable () -> Void] = []
    /// Senders waiting for room in a full ``BufferPolicy/waiting(capacity:)`` buffer.
    @usableFromInline var waiters: [Waiter] = []
    /// The last identity given to a waiting task.
    var nextWaiterID = 0
    /// How many times a sender waited.
    private var waits = 0

    init(
        policy: BufferPolicy, merge: Merge? = nil, weighs: Bool = false, clock: DeliveryClock = .system,
        handler: @escaping Handler
    ) {
        self.policy = policy
        self.weighs = weighs
        self.capacity = policy.capacity ?? .max
        if let low = policy.lowWatermark, let high = policy.highWatermark {
            self.flow = WatermarkStrategy(low: low, high: high)
        } else {
            self.flow = .neverPausing
        }
        self.merge = merge
        self.coalesces = merge != nil
        self.handler = handler
        self.lowWaterMark = (policy.capacity ?? 0) / 2
        // A coalescing buffer never holds more than one element; a bounded one never more than
        // its capacity.
        let limit = merge != nil ? 1 : policy.capacity
        self.buffer = SegmentedQueue(
            segmentCapacity: SegmentedQueue<Element>.defaultSegmentCapacity(limit: limit), clock: clock)
    }

    /// An input was dropped in front of the delivery, in a pipeline's stages (at a bounded
    /// intake, or refused by this buffer where its sender could not wait): it counts as received
    /// and dropped, so the counters still add up.
    mutating func recordDroppedInput() {
        received += 1
        dropped += 1
    }

    /// A change arrived.
    ///
    /// - Parameter exceedingCapacity: for a ``BufferPolicy/waiting(capacity:)`` buffer: accept
    ///   the element even when the buffer is full (a pipeline's timer fires, flushes and finish,
    ///   which must neither wait nor be refused).
    /// - Returns: what the caller must do; what became of the element (for `send` to answer);
    ///   and an element the caller must release after the lock is released: the one the policy
    ///   evicted, what a merge let go of, or `element` itself when it was not kept (rejected,
    ///   found full, or dropped by ``BufferPolicy/dropNewest(capacity:)``). The element is
    ///   consumed, so an element that is not kept must not die here, under the lock.
    ///
    /// A machine that ``weighs`` is told what `element` weighs first (``weighedIn``), by its
    /// engine: a parameter here would cost every `send` an argument on the stack.
    @inlinable
    mutating func enqueue(
        _ element: consuming Element,
        exceedingCapacity: Bool = false
    ) -> (action: EnqueueAction, result: SendResult, evicted: Element?) {
        guard lifecycle == .active else { return (.rejected, refusal, element) }
        // A coalescing buffer holds at most one element, so it never makes a sender wait.
        if policy.kind == .waiting, !exceedingCapacity, !coalesces, buffer.count >= capacity {
            return (.full, .refused(.waitingWouldDeadlock), element)
        }
        received += 1
        var evicted: Element?
        var result = SendResult.accepted
        if coalesces, !buffer.isEmpty, let merge {
            // The pending element has not been taken by a drain yet, so a drain is scheduled.
            var displaced = element
            buffer.mergeIntoLast(&displaced, with: merge)
            coalesced += 1
            return (.none, .coalesced, displaced)
        }
        switch policy.kind {
        case .unbounded, .waiting:
            buffer.append(consume element)
        case .dropOldest:
            if buffer.count >= capacity {
                evicted = buffer.removeFirst()
                dropped += 1
                result = .acceptedEvictingOldest
            }
            buffer.append(consume element)
        case .dropNewest:
            if buffer.count >= capacity {
                dropped += 1
                // A full buffer is non-empty, so a drain is already scheduled.
                return (.none, .dropped, element)
            }
            buffer.append(consume element)
        case .watermarks:
            buffer.append(consume element)
            if flow.isPaused {
                result = .acceptedAboveHighWatermark
            } else if let change = flow.didRise(to: level) {
                signal(change)
                result = .acceptedAboveHighWatermark
            }
        }
        maxPending = max(maxPending, buffer.count)
        if isDrainScheduled { return (.none, result, evicted) }
        isDrainScheduled = true
        return (.submitDrain, result, evicted)
    }

    /// Elements arrived together, in this order: each as by ``enqueue(_:)``, in one step.
    ///
    /// A machine that ``weighs`` is told what they weigh first (``weighedIn``), by its engine.
    ///
    /// - Returns: whether a drain must be submitted (or the receptionist refused them all), the
    ///   answer for the whole (see ``SendContentsResult``), and what the buffer let go of, to
    ///   release after the lock.
    @inlinable
    mutating func enqueue(
        contentsOf elements: [Element]
    ) -> (action: EnqueueAction, result: SendContentsResult, evicted: [Element]) {
        guard lifecycle == .active else {
            return (.rejected, SendContentsResult(count: elements.count, accepted: 0, result: refusal), [])
        }
        var result = SendContentsResult(
            nothingSentAnswering: flow.isPaused ? .acceptedAboveHighWatermark : .accepted)
        if elements.isEmpty { return (.none, result, []) }
        if !coalesces, policy.kind == .unbounded || policy.kind == .watermarks {
            // Kept whatever the fill: appended at once, and the level judged once, at its top
            // (it only rises meanwhile, so a pause at any of them is a pause at the last).
            for element in elements { buffer.append(element) }
            received += elements.count
            var answer = result.result
            if policy.kind == .watermarks, !flow.isPaused, let change = flow.didRise(to: level) {
                signal(change)
                answer = .acceptedAboveHighWatermark
            }
            result = SendContentsResult(count: elements.count, accepted: elements.count, result: answer)
            maxPending = max(maxPending, buffer.count)
            if isDrainScheduled { return (.none, result, []) }
            isDrainScheduled = true
            return (.submitDrain, result, [])
        }
        var action = EnqueueAction.none
        var evicted: [Element] = []
        for element in elements {
            let (step, answer, letGo) = enqueue(element)
            if step == .submitDrain { action = .submitDrain }
            result = result.adding(answer)
            if let letGo { evicted.append(letGo) }
        }
        return (action, result, evicted)
    }

    /// What a send that is not accepted answers, by why.
    @usableFromInline
    var refusal: SendResult {
        lifecycle == .cancelled ? .refused(.cancelled) : .refused(.finished)
    }

    /// A change arrived at a coalescing buffer, described lazily: if one is waiting, `fold`
    /// folds the new one into it in place (what it lets go of is released under the lock, so
    /// the caller must know it is not the last reference); otherwise the change `make` builds is
    /// enqueued, as by ``enqueue(_:)``. Saves building and destroying a change on every write
    /// that is coalesced.
    @inlinable
    mutating func enqueue(
        making make: () -> Element,
        foldingWith fold: (inout Element) -> Void
    ) -> (action: EnqueueAction, result: SendResult, evicted: Element?) {
        if coalesces, lifecycle == .active, !buffer.isEmpty {
            received += 1
            coalesced += 1
            buffer.updateLast(fold)
            return (.none, .coalesced, nil)
        }
        return enqueue(make())
    }

    @usableFromInline
    enum ClaimOutcome {
        /// Nothing was pending and no drain was running: the caller is now the drain and runs the
        /// handler on its element itself, which was not buffered (and is handed back).
        case claimed(Handler, Element)
        /// The element went through ``enqueue(_:)``, with this result.
        case enqueued(EnqueueAction, SendResult)
    }

    /// An element arrived at a receptionist that drains on the sending thread.
    ///
    /// Saves the buffer round trip for the common case of an idle receptionist: the element is
    /// handed straight back with the handler, as a drain of one.
    ///
    /// - Returns: the outcome, and an element to release after the lock, as ``enqueue(_:)``.
    @inlinable
    mutating func claimOrEnqueue(_ element: consuming Element) -> (ClaimOutcome, released: Element?) {
        // A watermark buffer counts every element it holds, so none bypasses it.
        guard lifecycle == .active, !isDrainScheduled, policy.kind != .watermarks else {
            let (action, result, evicted) = enqueue(element)
            return (.enqueued(action, result), evicted)
        }
        // No drain, so the buffer is empty (a non-empty active buffer always has one).
        received += 1
        handedOut += 1
        isDrainScheduled = true
        return (.claimed(handler!, element), nil)
    }

    /// A drain wants more elements; `budget` is how many task blocks it may still run (0 when
    /// it has spent its budget).
    ///
    /// Call ``giveBack(_:)`` first with the segment the previous step handed out, if any.
    ///
    /// - Returns: what the drain does next, and the handler when this step released it (the
    ///   receptionist finished), which the caller releases outside the lock.
    @inlinable
    mutating func nextSegment(budget: Int) -> (action: DrainAction, releasedHandler: Handler?) {
        if !isDrainScheduled {
            invalidConfiguration(
                "a drain ran that was not scheduled; a DeliveryTarget must run each submitted work item exactly once")
        }
        handedOutSince = 0
        switch lifecycle {
        case .cancelled, .finished:
            isDrainScheduled = false
            return (.stop(ended: true), nil)
        case .active, .finishing:
            if buffer.isEmpty {
                isDrainScheduled = false
                if lifecycle == .finishing {
                    lifecycle = .finished
                    return (.stop(ended: true), takeHandler())
                }
                return (.stop(ended: false), nil)
            }
            if budget == 0 { return (.yield, nil) }
            let segment = buffer.takeFirst(upTo: budget)!
            handedOut += segment.count
            handedOutSince = segment.startedAt
            return (.deliver(segment, handler!), nil)
        }
    }

    /// A drain ran every element of the segment ``nextSegment(budget:)`` handed it: the buffer
    /// keeps it as its spare, if it has none.
    ///
    /// - Parameter segment: set to `nil` when the buffer kept it; otherwise the caller releases
    ///   it outside the lock.
    @inlinable
    mutating func giveBack(_ segment: inout BufferSegment<Element>?) {
        guard let returned = segment else { return }
        precondition(
            returned.isEmpty, "Internal inconsistency: a drain gave back \(returned.count) elements it did not run")
        segment = buffer.recycle(returned)
    }

    /// A drain saw the cancellation and stopped with `undelivered` elements of its segment unrun.
    @usableFromInline
    mutating func drainInterrupted(undelivered: Int) {
        discarded += undelivered
        handedOut -= undelivered
        handedOutSince = 0
        isDrainScheduled = false
    }

    /// Stop now: discard what is pending and release the handler.
    ///
    /// - Returns: `nil` if already cancelled or finished; otherwise the handler and the pending
    ///   elements, for the caller to release outside the lock.
    mutating func cancel() -> (handler: Handler?, discarded: SegmentedQueue<Element>)? {
        switch lifecycle {
        case .cancelled, .finished:
            return nil
        case .active, .finishing:
            lifecycle = .cancelled
            signal(flow.end(.cancelled))
            discarded += buffer.count
            return (takeHandler(), buffer.removeAll())
        }
    }

    /// Stop accepting; deliver what is pending, then release the handler.
    ///
    /// - Returns: the handler if the receptionist finished at once (nothing pending, no drain).
    mutating func finish() -> Handler? {
        finish(appending: nil).releasedHandler
    }

    /// Stop accepting after `last`, which is buffered as the final element (unless `nil`);
    /// deliver what is pending, then release the handler.
    ///
    /// - Returns: the handler if the receptionist finished at once (nothing pending, no drain);
    ///   whether the caller must submit a drain (`last` arrived with none scheduled); and an
    ///   element a coalescing merge displaced, to release outside the lock.
    mutating func finish(
        appending last: Element?
    ) -> (releasedHandler: Handler?, needsDrain: Bool, evicted: Element?) {
        guard lifecycle == .active else { return (nil, false, nil) }
        signal(flow.end(.finished))
        if let last {
            let (action, _, evicted) = enqueue(last, exceedingCapacity: true)
            lifecycle = .finishing
            return (nil, action == .submitDrain, evicted)
        }
        if buffer.isEmpty && !isDrainScheduled {
            lifecycle = .finished
            return (takeHandler(), false, nil)
        }
        precondition(
            isDrainScheduled,
            "Internal inconsistency: \(buffer.count) pending changes without a scheduled drain"
        )
        lifecycle = .finishing
        return (nil, false, nil)
    }

    /// When the oldest element not yet delivered was buffered (a ``DeliveryClock`` time; `nil` or
    /// 0: none, or not stamped), given that `delivered` task blocks returned: the first of the
    /// segment a drain is delivering, while one of its task blocks has not returned (it is older
    /// than anything in the buffer); otherwise the buffer's oldest.
    func oldestUndeliveredStartedAt(delivered: Int) -> UInt64? {
        if handedOutSince != 0, handedOut > delivered { return handedOutSince }
        return buffer.oldestStartedAt
    }

    func statistics(delivered: Int) -> ReceptionistStatistics {
        ReceptionistStatistics(
            received: received,
            delivered: delivered,
            dropped: dropped,
            discarded: discarded,
            coalesced: coalesced,
            pending: buffer.count,
            inFlight: handedOut - delivered,
            maxPending: maxPending,
            waits: waits,
            pauses: flow.pauses
        )
    }

    /// A sender found the buffer full: it waits on `waiter`, unless there is room (or the
    /// receptionist stopped accepting) by now.
    ///
    /// - Returns: whether the sender must wait; if not, it sends again at once.
    @usableFromInline
    mutating func wait(_ waiter: Waiter) -> Bool {
        guard lifecycle == .active, buffer.count >= capacity else { return false }
        waits += 1
        waiters.append(waiter)
        return true
    }

    /// A new identity for a ``Waiter/task(_:id:)``.
    @usableFromInline
    mutating func makeWaiterID() -> Int {
        nextWaiterID += 1
        return nextWaiterID
    }

    /// Takes out the waiting task `id`, if it still waits (its task was cancelled).
    @usableFromInline
    mutating func removeWaitingTask(id: Int) -> Waiter? {
        guard
            let index = waiters.firstIndex(where: {
                if case .task(_, let waiting) = $0 { return waiting == id }
                return false
            })
        else { return nil }
        return waiters.remove(at: index)
    }

    /// The waiting senders (and callbacks waiting for writability) to wake, once the buffer has
    /// drained to its low-water mark (``lowWaterMark``) or the receptionist no longer accepts
    /// changes; none before. Senders waiting for room in a ``BufferPolicy/waiting(capacity:)``
    /// buffer: one per drain step while the buffer is not empty, all that are left once it is
    /// empty or the receptionist stopped. Callbacks of a paused
    /// ``BufferPolicy/watermarks(low:high:)`` buffer: all at once, and it is no longer paused.
    /// Cheap when nobody waits and nothing is paused.
    ///
    /// Woken only once there is real room, each sender goes on to send many changes before it
    /// can find the buffer full again; waking one sender per freed slot made producers sleep
    /// and wake once per change under a flood, and waking all at once, a thundering herd.
    @inlinable
    mutating func waitersToWake() -> [Waiter] {
        guard !waiters.isEmpty || !signalled.isEmpty else { return [] }
        return takeWaitersToWake()
    }

    @usableFromInline
    mutating func takeWaitersToWake() -> [Waiter] {
        var wake = signalled
        signalled = []
        guard !waiters.isEmpty, lifecycle != .active || buffer.count <= lowWaterMark else { return wake }
        // `.waiting`: room, and a drain still to take what is left: one sender, the longest
        // waiting. A sender that sends flat out fills the room alone; the next step of this drain
        // wakes the next one while the buffer stays at or below the mark, and the step that
        // empties the buffer (the drain's last chance to wake anyone) wakes them all, so nobody is
        // stranded, not even behind a woken task that was cancelled and sends nothing. (Waking
        // them all at once made 64 blocked senders on 2 cores a thundering herd.) The callbacks of
        // a watermark buffer all run at once: none of them sends from here.
        if policy.kind == .waiting, lifecycle == .active, !buffer.isEmpty {
            wake.append(waiters.removeFirst())
            return wake
        }
        wake += waiters
        waiters = []
        return wake
    }

    /// How many elements the receptionist holds and has not delivered: those waiting in the
    /// buffer, those a drain took whose task block has not returned (as the drain last reported,
    /// ``noteDelivered(_:)``), and, for a pipeline's intake, those behind the stages
    /// (``heldBehind``). What flow control counts. For a machine that ``weighs``, their weight.
    @inlinable
    var level: Int { accepted &- deliveredReported &+ heldBehind }

    /// What was accepted and not taken back by a cancelled drain, in the level's unit: the
    /// elements in the buffer and those handed out, or, for a machine that ``weighs``, the weight
    /// of all accepted (a cancelled drain ends the flow, so its unrun elements no longer matter).
    @inlinable
    var accepted: Int { weighs ? weighedIn : buffer.count &+ handedOut }

    /// The drain reports that `delivered` task blocks returned in all (or, with `heldBehind`, a
    /// pipeline's intake what waits behind its stages): a paused producer may go on.
    @inlinable
    mutating func noteDelivered(_ delivered: Int, heldBehind behind: Int? = nil) {
        if delivered > deliveredReported { deliveredReported = delivered }
        if let behind { heldBehind = behind }
        if flow.isPaused { signal(flow.didFall(to: level)) }
    }

    /// The delivered count at which a paused producer may go on if nothing more arrives
    /// (`Int.max` when it is not paused): the drain compares its count with it after each task
    /// block, so that the producer resumes at the low watermark, not a segment later.
    @inlinable
    var resumeThreshold: Int {
        flow.isPaused ? accepted &+ heldBehind &- flow.low : .max
    }

    /// What producers are told now.
    var writability: Writability { flow.writability }

    /// Hands a change of writability to whoever waits for it: the one-shot blocks (at a resume or
    /// the end) and every listener, in order; what must run after the lock goes to ``signalled``.
    @usableFromInline
    mutating func signal(_ change: Writability?) {
        guard let change else { return }
        if change != .paused, !writableCallbacks.isEmpty {
            for callback in writableCallbacks { signalled.append(.callback { callback(change) }) }
            writableCallbacks = []
        }
        for listener in listeners {
            if let drain = listener.signal(change) { signalled.append(drain) }
        }
        if change.isEnded, !listeners.isEmpty {
            // Released after the lock: each holds its handler until its last change ran.
            let ended = listeners
            listeners = []
            signalled.append(.callback { withExtendedLifetime(ended) {} })
        }
    }

    /// A producer wants to hear once when it may send again: `callback` (already bound to its
    /// target) waits for the next ``Writability/writable`` or ``Writability/ended(_:)`` if the
    /// producer is paused; otherwise it is handed, with the state, to ``signalled`` at once.
    mutating func whenWritable(_ callback: @escaping @Sendable (Writability) -> Void) {
        if flow.isPaused {
            writableCallbacks.append(callback)
        } else {
            let now = flow.writability
            signalled.append(.callback { callback(now) })
        }
    }

    /// A producer's persistent handler: it hears the current state now (through ``signalled``),
    /// then every change until the end.
    mutating func addListener(_ listener: WritabilityListener) {
        if let drain = listener.signal(flow.writability) { signalled.append(drain) }
        if !flow.writability.isEnded { listeners.append(listener) }
    }

    /// For a ``BufferPolicy/waiting(capacity:)`` buffer: how far it drains before the senders
    /// waiting for room are woken. Half its capacity, so that the task block still has work
    /// while the woken senders get going; zero in front of a waiting pipeline's stages, where the
    /// outputs waiting behind the stages keep the task block busy meanwhile
    /// (``wakesSendersWhenEmpty()``), so that a wake-up frees the whole capacity.
    @usableFromInline
    private(set) var lowWaterMark: Int

    /// Wakes waiting senders only once the buffer is empty (see ``lowWaterMark``).
    @usableFromInline
    mutating func wakesSendersWhenEmpty() {
        lowWaterMark = 0
    }

    /// Registers `completion`, to run once the receptionist ended (finished, or cancelled).
    mutating func onEnd(_ completion: @escaping @Sendable () -> Void) {
        completions.append(completion)
    }

    /// The completions to run now, after the lock: all of them once the receptionist ended.
    mutating func takeCompletionsIfEnded() -> [@Sendable () -> Void] {
        guard lifecycle == .finished || lifecycle == .cancelled, !completions.isEmpty else { return [] }
        defer { completions = [] }
        return completions
    }

    @usableFromInline
    mutating func takeHandler() -> Handler? {
        defer { handler = nil }
        return handler
    }
}
extension ReceptionistStateMachine.ClaimOutcome: Sendable where Element: Sendable {}

extension ReceptionistStateMachine: Sendable where Element: Sendable {}

/// A sender waiting for room in a full buffer.
@usableFromInline
enum Waiter: Sendable {
    /// A thread, blocked in `send`.
    case thread(DispatchSemaphore)
    /// A task, suspended in `sendSuspending`; `id` lets its cancellation take it out.
    case task(CheckedContinuation<Void, Never>, id: Int)
    /// A producer's block, waiting for a paused ``BufferPolicy/watermarks(low:high:)`` buffer
    /// to fall to its low watermark (``Receptionist/whenWritable(on:_:)``); it submits the
    /// producer's block to the producer's chosen target.
    case callback(@Sendable () -> Void)

    /// Lets the sender try again. Called after the lock is released.
    @usableFromInline
    func wake() {
        switch self {
        case .thread(let semaphore): semaphore.signal()
        case .task(let continuation, _): continuation.resume()
        case .callback(let callback): callback()
        }
    }
}
