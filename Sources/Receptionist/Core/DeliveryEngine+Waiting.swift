import Dispatch

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

// Senders that wait for room: the ``BufferPolicy/waiting(capacity:)`` side of the delivery
// engine, and how it tells where waiting would deadlock.

extension DeliveryEngine where Guard: ~Copyable {
    /// What one attempt to send into a ``BufferPolicy/waiting(capacity:)`` buffer did.
    @usableFromInline
    enum Attempt {
        /// Sent (`true`), or not accepted: the receptionist stopped (`false`).
        case done(Bool)
        /// The buffer is full: the element is handed back, to send again once there is room.
        case full(Element)
    }

    /// Sends `element` into a ``BufferPolicy/waiting(capacity:)`` buffer, blocking the calling
    /// thread while the buffer is full.
    ///
    /// - Returns: `false` if the receptionist no longer accepts changes, or if the buffer is full
    ///   and waiting here could deadlock (``waitingHereCouldDeadlock``).
    // Inlinable, as are the functions it calls: the drain it may start runs in the closure that
    // `submitDrain()` forms here, which would otherwise run the whole drain, stages included, as
    // unspecialised generic code (a metadata lookup per step: 6 µs instead of ~0.2 µs per change
    // through a `map` stage, benchmark row "map + waiting 1024", one producer).
    @inlinable
    func sendOrWait(_ element: consuming Element) -> Bool {
        var pending = Optional(element)
        var checkedContext = false
        while true {
            switch attempt(pending.take().unsafelyUnwrapped) {
            case .done(let accepted):
                return accepted
            case .full(let element):
                if !checkedContext {
                    if waitingHereCouldDeadlock { return false }
                    checkedContext = true
                }
                let semaphore = DispatchSemaphore(value: 0)
                if state.withLock({ $0.wait(.thread(semaphore)) }) { semaphore.wait() }
                pending = element
            }
        }
    }

    /// Sends `element`, suspending the calling task while a ``BufferPolicy/waiting(capacity:)``
    /// buffer is full; with any other policy, as ``send(_:)``.
    ///
    /// Suspending never holds the target (an actor, the main actor's queue) the way a blocked
    /// thread would, so it needs no context check. Cancelling the task ends the wait: the send
    /// returns `false` without sending. A task that is already cancelled still sends if there is
    /// room, and does not wait if there is none.
    func sendSuspending(_ element: Element) async -> Bool {
        guard waits else { return send(element) }
        var pending = element
        while true {
            switch attempt(pending) {
            case .done(let accepted):
                return accepted
            case .full(let element):
                if Task.isCancelled { return false }
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
                if Task.isCancelled { return false }
                pending = element
            }
        }
    }

    /// What an attempt decided under the lock.
    @usableFromInline
    enum AttemptStep: Sendable {
        case claimed(Handler, Element)
        case enqueued(ReceptionistStateMachine<Element>.EnqueueAction)
        case full(Element)
    }

    /// One attempt to send into a waiting buffer: claims an idle inline drain, or enqueues, or
    /// hands the element back if the buffer is full.
    @inlinable
    func attempt(_ element: consuming Element) -> Attempt {
        var moving = Optional(element)
        let step: AttemptStep = state.withLockThenRelease { machine in
            let element = moving.take().unsafelyUnwrapped
            if drainsInline, machine.lifecycle == .active, !machine.isDrainScheduled {
                // Idle: the element is claimed, never found full.
                let (outcome, released) = machine.claimOrEnqueue(element)
                switch consume outcome {
                case .claimed(let handler, let element): return (.claimed(handler, element), released: released)
                case .enqueued(let action): return (.enqueued(action), released: released)
                }
            }
            let (action, notKept) = machine.enqueue(element)
            if action == .full { return (.full(notKept.unsafelyUnwrapped), released: nil) }
            return (.enqueued(action), released: notKept)
        }
        switch consume step {
        case .claimed(let handler, let element):
            drain(claimed: element, handler: handler)
            return .done(true)
        case .enqueued(let action):
            if action == .submitDrain { submitDrain() }
            return .done(action != .rejected)
        case .full(let element):
            return .full(element)
        }
    }

    /// Whether a thread blocked here waiting for room could keep this engine's drains from ever
    /// making it: inside one of its task blocks, where its target says its drains cannot run
    /// meanwhile (``ContextAware/waitingHereBlocksDrains``), or, for a waiting pipeline's intake,
    /// where the delivery behind the stages could not make room (``refusesWaiting``).
    @usableFromInline
    var waitingHereCouldDeadlock: Bool {
        drainMark?.isCurrent == true
            || (target as? any ContextAware)?.waitingHereBlocksDrains == true
            || refusesWaiting?() == true
    }
}

/// Marks the code a drain runs (its task blocks), for a ``BufferPolicy/waiting(capacity:)``
/// receptionist: a send from there must not wait for room that only the drain can make.
///
/// Drains nest on one thread (a stage closure of one pipeline sends to another whose stages run
/// inline, whose closure sends back), so the marks in effect form a chain, innermost first, and a
/// drain is recognised anywhere in it, not only as the innermost.
///
/// The chain is the thread's: a drain and its task blocks run synchronously on one thread, so
/// the thread running a send is in a drain exactly when one of its frames is in ``run(_:)``. Each
/// link lives on the stack of the `run` that made it and is reachable, through a thread-specific
/// pointer, only while that `run` is on the stack (no allocation per drain segment or claimed
/// element: a task-local chain allocated a link per element when a sender ran the drain itself).
@usableFromInline
final class DrainMark: Sendable {
    @usableFromInline
    init() {}

    #if os(Windows)
    /// The marks of the drains whose task blocks run on this thread (or task), innermost first.
    @TaskLocal static var current: Chain?

    /// A mark and the marks it is nested in.
    final class Chain: Sendable {
        let mark: ObjectIdentifier
        let outer: Chain?

        init(_ mark: ObjectIdentifier, outer: Chain?) {
            self.mark = mark
            self.outer = outer
        }
    }

    /// Runs `body` marked as this drain's.
    @usableFromInline
    func run(_ body: () -> Void) {
        Self.$current.withValue(Chain(ObjectIdentifier(self), outer: Self.current), operation: body)
    }

    /// Whether the calling code runs inside a task block of this drain, however deeply nested.
    var isCurrent: Bool {
        var chain = Self.current
        while let link = chain {
            if link.mark == ObjectIdentifier(self) { return true }
            chain = link.outer
        }
        return false
    }
    #else
    /// One link of the thread's chain: a mark, and the link of the drain it runs nested in.
    private struct Link {
        let mark: ObjectIdentifier
        let outer: UnsafeRawPointer?
    }

    /// The thread's innermost link, or `nil` outside any marked drain.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "Receptionist: pthread_key_create failed (\(status))")
        return key
    }()

    /// Runs `body` marked as this drain's.
    @usableFromInline
    func run(_ body: () -> Void) {
        var link = Link(mark: ObjectIdentifier(self), outer: pthread_getspecific(Self.key).map(UnsafeRawPointer.init))
        withUnsafePointer(to: &link) { pointer in
            // Published only while this frame is on the stack; the outer link is restored before
            // the pointer goes out of scope.
            pthread_setspecific(Self.key, pointer)
            defer { pthread_setspecific(Self.key, pointer.pointee.outer) }
            body()
        }
    }

    /// Whether the calling code runs inside a task block of this drain, however deeply nested.
    var isCurrent: Bool {
        var next = pthread_getspecific(Self.key).map(UnsafeRawPointer.init)
        while let pointer = next {
            let link = pointer.load(as: Link.self)
            if link.mark == ObjectIdentifier(self) { return true }
            next = link.outer
        }
        return false
    }
    #endif
}

/// A target that can tell whether a thread blocked where the calling code runs could keep it
/// from running drains: for a ``BufferPolicy/waiting(capacity:)`` receptionist, whose senders
/// must not wait there for room only a drain can make.
protocol ContextAware {
    /// Makes ``waitingHereBlocksDrains`` answer (called once per waiting receptionist on the
    /// target).
    func prepareContextCheck()
    /// Whether blocking the calling thread could keep this target from running drains until it
    /// is unblocked: it runs on the target's own queue, for example.
    var waitingHereBlocksDrains: Bool { get }
}
