import Dispatch
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

// Where a sender must not wait for room: the deadlock avoidance of
// `BufferPolicy.waiting(capacity:)`, every rule and every way of telling where code runs.
//
// A sender that finds a waiting receptionist's buffer full waits for a drain to make room
// (`DeliveryEngine+Waiting.swift`). Where that drain cannot run while the sender's thread is
// blocked, a `send` is refused instead: it returns `false` at once. `sendSuspending` is never
// refused for where it runs (a suspended task holds no thread, queue or actor).
//
// The rows, as ThreadingGuarantees states them ("Back-pressure", "Where a send does not wait"),
// each decided by the code marked with its number below:
//
// 1. Inside a drain of the same receptionist: its task blocks, a pipeline's stage closures, and
//    another receptionist's drain running nested in one of them, on any target. (`DrainMark`.)
// 2. On a `DispatchQueue` target, or on a queue that targets it however indirectly. (A key of
//    the queue's own, `QueueContextKey`.)
// 3. For a `DispatchQueue.main` or main-actor target: also anywhere on the main thread, which
//    services the main queue when it runs `RunLoop.main`. (`Thread.isMainThread`.)
// 4. In an operation of an `OperationQueue` target. (`OperationQueue.current`.)
// 5. For an actor target: in any Swift task. (`withUnsafeCurrentTask`.)
// 6. For an executor target (`ExecutorTarget`): in any Swift task, as row 5, and on the executor
//    where it says so. (`withUnsafeCurrentTask`; `SerialExecutor.isIsolatingCurrentContext()`.)
// 7. At a waiting pipeline's intake: wherever rows 1 to 6 refuse for the delivery behind its
//    stages. (`DeliveryEngine.refusesWaiting`, which `StagedPipeline` sets.)
//
// Never refused, because the drain runs meanwhile: a send to a global queue target (it is
// concurrent), the intake of a waiting pipeline from the library's stage queue (concurrent and
// shared: `StageQueueTarget` is not `ContextAware`), and on an `ImmediateTarget` or a target of
// your own outside row 1. Not recognised, as documented: the queue that a target queue itself
// targets, an actor's custom executor's queue outside any task, and an executor target's context
// outside any task where the executor cannot tell (`isIsolatingCurrentContext()` answers `nil`,
// or is not there: before Swift 6.2's runtime, macOS 26 on Apple platforms; `checkIsolated()`
// cannot be asked, it stops the program when the answer is no).

extension DeliveryEngine where Guard: ~Copyable {
    /// Whether a thread blocked here waiting for room could keep this engine's drains from ever
    /// making it (the rows above): inside one of its task blocks, where its target says its drains
    /// cannot run meanwhile (``ContextAware/waitingHereBlocksDrains``), or, for a waiting
    /// pipeline's intake, where the delivery behind the stages could not make room
    /// (``refusesWaiting``).
    ///
    /// Asked once per send that finds the buffer full, never on the path of a send that has room.
    @usableFromInline
    var waitingHereCouldDeadlock: Bool {
        // Row 1: in one of this engine's drains, however deeply nested.
        if drainMark?.isCurrent == true { return true }
        // Rows 2 to 6: where the target cannot run a drain while this thread is blocked.
        if let context = target as? any ContextAware, context.waitingHereBlocksDrains { return true }
        // Row 7: in front of a waiting pipeline's stages, where its delivery would refuse.
        return refusesWaiting?() == true
    }
}

/// A target that can tell whether a thread blocked where the calling code runs could keep it
/// from running drains: for a ``BufferPolicy/waiting(capacity:)`` receptionist, whose senders
/// must not wait there for room only a drain can make.
///
/// A new kind of target conforms if a sender blocked on its context could stop it from running
/// drains (rows 2 to 6 above are the library's).
protocol ContextAware {
    /// Makes ``waitingHereBlocksDrains`` answer (called once per waiting receptionist on the
    /// target, when it is created).
    func prepareContextCheck()
    /// Whether blocking the calling thread could keep this target from running drains until it
    /// is unblocked: it runs on the target's own queue, for example.
    var waitingHereBlocksDrains: Bool { get }
}

// MARK: - Row 1: drains

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
        // Unsafe: the link of the drain this one runs nested in, on this thread's stack (test: WaitingPolicyStressTests)
        let outer: UnsafeMutableRawPointer?
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
        var link = Link(mark: ObjectIdentifier(self), outer: pthread_getspecific(Self.key))
        // Unsafe: a link on the stack, no allocation per drain (row: "receptionist → DispatchQueue")
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
        var next = pthread_getspecific(Self.key)
        while let pointer = next {
            let link = pointer.load(as: Link.self)
            if link.mark == ObjectIdentifier(self) { return true }
            next = link.outer
        }
        return false
    }
    #endif
}

// MARK: - Rows 2 and 3: dispatch queues

extension DispatchQueue: ContextAware {
    func prepareContextCheck() {
        // A global queue is concurrent: a thread blocked on it does not keep it from running a
        // drain (and libdispatch does not take specific values on it: it traps).
        guard !label.hasPrefix("com.apple.root.") else { return }
        _ = contextKey()
    }

    /// Row 2: on this queue, or on a queue that targets it. Row 3: for the main queue, also
    /// anywhere on the main thread, which services the main queue when it runs `RunLoop.main`.
    /// Not recognised: the queue this one targets (code there would block this one's drains too).
    var waitingHereBlocksDrains: Bool {
        guard let context = getSpecific(key: queueContextKey) else { return false }
        if context === mainQueueContextKey && Thread.isMainThread { return true }
        return DispatchQueue.getSpecific(key: context.key) != nil
    }

    /// This queue's ``QueueContextKey``, set on it if it has none. Under a lock, so that two
    /// receptionists preparing one queue at once agree.
    fileprivate func contextKey() -> QueueContextKey {
        queuesWithContextKeys.withLock { count in
            if let context = getSpecific(key: queueContextKey) { return context }
            let context = QueueContextKey()
            setSpecific(key: context.key, value: ())
            setSpecific(key: queueContextKey, value: context)
            count += 1
            return context
        }
    }

    /// Test hook: how many queues hold a ``QueueContextKey`` (queues that a waiting receptionist
    /// targets or targeted, and that were not deallocated yet).
    package static var queuesHoldingContextKeys: Int {
        queuesWithContextKeys.withLock { $0 }
    }

    /// Test hook: this queue's ``QueueContextKey``, if a waiting receptionist prepared it.
    package var preparedContextKey: AnyObject? { getSpecific(key: queueContextKey) }
}

/// The key of one `DispatchQueue` that a waiting receptionist targets: set on that queue only,
/// so code runs on the queue, or on a queue that targets it however indirectly, exactly when
/// `DispatchQueue.getSpecific(key:)` (which looks on the current queue, then on each queue it
/// targets) finds it from there.
///
/// A key per queue rather than one shared key with a value per queue: with a shared key, a queue
/// that targets another and has a value of its own would hide the other's.
///
/// The queue itself holds its key, as its value for `queueContextKey`, and nothing else keeps it.
/// It is found on the queue (read on the queue itself, never inherited), not through the queue
/// object's identity: a `DispatchQueue` value is a wrapper, and `DispatchQueue.main` on Linux
/// makes a new one on every call. libdispatch releases a queue's specific values once the queue
/// is deallocated, so a key lives exactly as long as its queue, and any number of short-lived
/// queues leave no key behind. A queue retains the queue it targets, so code on a live queue never
/// looks for a key on a deallocated one (whose key's memory a new key may reuse).
final class QueueContextKey: Sendable {
    /// Set on the queue, with the value `()`.
    let key = DispatchSpecificKey<Void>()

    // Runs once the queue is deallocated, when libdispatch releases its specific values (on one
    // of its own threads, after the fact): never under `queuesWithContextKeys`, which is taken
    // only with the queue alive, holding this key.
    deinit { queuesWithContextKeys.withLock { $0 -= 1 } }
}

/// Where a prepared queue keeps its ``QueueContextKey`` (read on the queue itself).
private let queueContextKey = DispatchSpecificKey<QueueContextKey>()

/// How many queues hold a ``QueueContextKey``; its lock also makes preparing a queue atomic.
private let queuesWithContextKeys = Locked<Int>(0)

/// The main queue's key, prepared on first use; it lives as long as the process.
private let mainQueueContextKey: QueueContextKey = DispatchQueue.main.contextKey()

// MARK: - Row 4: operation queues

extension OperationQueue: ContextAware {
    func prepareContextCheck() {}

    /// In one of this queue's operations.
    var waitingHereBlocksDrains: Bool { OperationQueue.current === self }
}

// MARK: - Row 5: actors

extension ActorTarget: ContextAware {
    func prepareContextCheck() {}

    /// In any Swift task: code isolated to the actor runs in one (so does every drain on it), and
    /// a synchronous function cannot learn which actor it runs on without trapping. A thread of
    /// the concurrency pool blocked there holds the actor, or may starve the pool the actor's
    /// drain needs; a task should `sendSuspending` instead.
    var waitingHereBlocksDrains: Bool { runsInSwiftTask }
}

/// Whether the calling code runs in a Swift task (rows 5 and 6).
private var runsInSwiftTask: Bool {
    // Unsafe: the only synchronous way to ask whether code runs in a task; the task is not used (test: WaitingPolicyStressTests)
    withUnsafeCurrentTask { $0 != nil }
}

// MARK: - Row 6: executors

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ExecutorTarget: ContextAware {
    func prepareContextCheck() {}

    /// In any Swift task, as for an actor: code isolated to an actor on this executor runs in
    /// one, and so does every job of this target (its drains). Outside a task, on the executor's
    /// own context where the executor can tell (SE-0471's `isIsolatingCurrentContext()`; one
    /// that does not implement it answers `nil`): an event loop's own thread, blocked, would never
    /// run the drain it waits for.
    var waitingHereBlocksDrains: Bool {
        if runsInSwiftTask { return true }
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            return executor.isIsolatingCurrentContext() == true
        }
        return false
    }
}
