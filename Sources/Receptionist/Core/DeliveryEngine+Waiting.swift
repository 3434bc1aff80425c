import Dispatch

// Senders that wait for room: the ``BufferPolicy/waiting(capacity:)`` side of the delivery
// engine. Where a sender must not wait (the refusal rules, and how the engine tells where code
// runs) is in `WaitingContext.swift`.

extension DeliveryEngine where Guard: ~Copyable {
    /// What one attempt to send into a ``BufferPolicy/waiting(capacity:)`` buffer did.
    @usableFromInline
    enum Attempt {
        /// Sent, or not accepted (the receptionist stopped): what became of the element.
        case done(SendResult)
        /// The buffer is full: the element is handed back, to send again once there is room.
        case full(Element)
    }

    /// Sends `element` into a ``BufferPolicy/waiting(capacity:)`` buffer, blocking the calling
    /// thread while the buffer is full.
    ///
    /// - Returns: ``SendResult/accepted``, or a refusal: the receptionist no longer accepts
    ///   changes, or the buffer is full and waiting here could deadlock
    ///   (``waitingHereCouldDeadlock``).
    // Inlinable, as are the functions it calls: the drain it may start runs in the closure that
    // `submitDrain()` forms here, which would otherwise run the whole drain, stages included, as
    // unspecialised generic code (a metadata lookup per step, which makes every change through a
    // `map` stage many times slower: benchmark row "map + waiting 1024").
    @inlinable
    func sendOrWait(_ element: consuming Element) -> SendResult {
        var pending = element
        var checkedContext = false
        while true {
            // Moved into each attempt, and back into `pending` when it hands the element back.
            switch attempt(consume pending) {
            case .done(let accepted):
                return accepted
            case .full(let element):
                if !checkedContext {
                    if waitingHereCouldDeadlock { return .refused(.waitingWouldDeadlock) }
                    checkedContext = true
                }
                let semaphore = DispatchSemaphore(value: 0)
                if state.withLock({ $0.wait(.thread(semaphore)) }) { semaphore.wait() }
                pending = element
            }
        }
    }

    /// Sends `element`, suspending the calling task while a ``BufferPolicy/waiting(capacity:)``
    /// buffer is full; with any other policy, as ``send(_:)``. What task cancellation does is on
    /// ``Receptionist/sendSuspending(_:)``.
    ///
    /// Suspending never holds the target (an actor, the main actor's queue) the way a blocked
    /// thread would, so it needs no context check.
    func sendSuspending(_ element: Element) async -> SendResult {
        guard waits else { return await suspendingWhilePaused(send(element)) }
        var pending = element
        while true {
            switch attempt(pending) {
            case .done(let accepted):
                return accepted
            case .full(let element):
                if Task.isCancelled { return .refused(.taskCancelled) }
                let id = state.withLock { $0.makeWaiterID() }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        // Checked under the lock that the cancellation handler takes: either the
                        // handler finds this waiter, or this sees the task cancelled and waits not.
                        let waits = state.withLock { machine in
                            !Task.isCancelled && machine.wait(.task(continuation, id: id))
                        }
                        if !waits { continuation.resume() }
                    }
                } onCancel: {
                    state.withLock { $0.removeWaitingTask(id: id) }?.wake()
                }
                // Woken for room (or by the cancellation) and cancelled meanwhile: not sent. No
                // wake-up is lost with it: the drain wakes the next sender at its next step, and
                // every one left at the step that empties the buffer (`waitersToWake`).
                if Task.isCancelled { return .refused(.taskCancelled) }
                pending = element
            }
        }
    }

    /// After a send into a ``BufferPolicy/watermarks(low:high:)`` buffer that answered
    /// ``SendResult/acceptedAboveHighWatermark`` (its element is kept): suspends until producers
    /// may go on or the receptionist ended, as async-algorithms' multi-producer channel does
    /// above its high watermark. Task cancellation ends the wait early. Returns `result`.
    func suspendingWhilePaused(_ result: SendResult) async -> SendResult {
        guard result.shouldPause else { return result }
        let waiting = OnceContinuation(current: { [self] in self.writability })
        _ = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Writability, Never>) in
                waiting.set(continuation)
                whenWritable(on: ImmediateTarget()) { state in waiting.resume(state) }
            }
        } onCancel: {
            waiting.resume(nil)
        }
        return result
    }

    /// What an attempt decided under the lock.
    @usableFromInline
    enum AttemptStep: Sendable {
        case claimed(Handler, Element)
        case enqueued(ReceptionistStateMachine<Element>.EnqueueAction, SendResult)
        case full(Element)
    }

    /// One attempt to send into a waiting buffer: claims an idle inline drain, or enqueues, or
    /// hands the element back if the buffer is full.
    @inlinable
    func attempt(_ element: consuming Element) -> Attempt {
        // Moved into the lock, not copied (a closure cannot consume what it captures).
        var moving = Optional(element)
        let step: AttemptStep = state.withLockThenRelease { machine in
            let element = moving.take()!
            if drainsInline, machine.lifecycle == .active, !machine.isDrainScheduled {
                // Idle: the element is claimed, never found full.
                let (outcome, released) = machine.claimOrEnqueue(element)
                switch consume outcome {
                case .claimed(let handler, let element): return (.claimed(handler, element), released: released)
                case .enqueued(let action, let result): return (.enqueued(action, result), released: released)
                }
            }
            let (action, result, notKept) = machine.enqueue(element)
            // A buffer found full hands the element back.
            if action == .full { return (.full(notKept!), released: nil) }
            return (.enqueued(action, result), released: notKept)
        }
        switch consume step {
        case .claimed(let handler, let element):
            drain(from: .claimed(element, handler))
            return .done(.accepted)
        case .enqueued(let action, let result):
            if action == .submitDrain { submitDrain() }
            return .done(result)
        case .full(let element):
            return .full(element)
        }
    }
}
