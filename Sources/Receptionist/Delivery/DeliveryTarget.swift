import Dispatch
import Foundation

/// An execution context that a receptionist bounces its task blocks onto.
///
/// A receptionist never submits one unit of work per change. It submits a *drain*: a closure
/// that runs the task block for a chunk of pending changes, in order, and resubmits itself if
/// more are pending after its budget. At most one drain of a receptionist is submitted or
/// running at any time, so task blocks run one at a time and in order even when the target
/// runs submitted work concurrently (a concurrent `DispatchQueue`, an `OperationQueue` with
/// several operations at once).
///
/// The library provides:
/// - `DispatchQueue` (serial or concurrent), through `async`;
/// - `OperationQueue` (including `OperationQueue.main`), through `addOperation`;
/// - ``MainActorTarget/mainActor``, for task blocks isolated to the main actor (a separate
///   kind of target, so that the task block's type says so);
/// - any `SerialExecutor`, such as a SwiftNIO event loop's (``DeliveryTarget/executor(_:)``,
///   ``ExecutorTarget``), through a job on the executor;
/// - ``ImmediateTarget`` (``DeliveryTarget/immediate``), which runs the drain synchronously on
///   the thread that made the change.
///
/// A drain runs at the quality of service of its target, never at that of the sender that
/// happened to start the burst: see <doc:ThreadingGuarantees#Quality-of-service>.
///
/// ## Conforming
/// Implement ``submit(_:)`` to run `work` exactly once, eventually, on your context (a run
/// loop, an event loop, a custom thread). Run it asynchronously: a target that runs `work`
/// inside `submit` recurses once per drain budget under a flood; use ``ImmediateTarget`` for
/// synchronous delivery, which the receptionist handles with a loop instead.
// Library contributors: a new *kind* of target (one whose task block has another type, as the main
// actor's has) is one new file beside `MainActorTarget.swift`: the target type, a factory of
// `Delivery` values, and its one-line overloads of every API that takes a target. See
// `Delivery.swift`. Where a target refuses a waiting send (a `DispatchQueue` or `OperationQueue`
// on itself, an actor in a task) is decided in `Core/WaitingContext.swift` (`ContextAware`).
public protocol DeliveryTarget: Sendable {
    /// Runs `work` once, later, on this target's execution context.
    ///
    /// Called without any receptionist lock held. `work` must not be dropped: a receptionist
    /// whose drain is never run keeps its pending changes (and stops delivering) forever.
    func submit(_ work: @escaping @Sendable () -> Void)
}

extension DispatchQueue: DeliveryTarget {
    /// Submits `work` with `async(flags: .noQoS, execute:)`: it runs at this queue's quality of
    /// service (`.default` for a queue without one), not at the submitting thread's; see
    /// <doc:ThreadingGuarantees#Quality-of-service>.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        async(flags: DispatchQueue.drainFlags, execute: work)
    }

    /// The flags of every drain submitted to a queue: without the submitting thread's quality of
    /// service, which `async` would otherwise capture (a queue without a QoS of its own would run
    /// the drain at that QoS, and a serial queue with one would be boosted to it until the drain
    /// ran).
    static var drainFlags: DispatchWorkItemFlags { .noQoS }
}

extension OperationQueue: DeliveryTarget {
    /// Submits `work` with `addOperation(_:)`: it runs at the queue's `qualityOfService`; see
    /// <doc:ThreadingGuarantees#Quality-of-service>.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        let operation = BlockOperation(block: work)
        // Explicit, as `addOperation(_:)` with a block sets it only on a queue whose
        // `qualityOfService` was set: otherwise Foundation runs the operation at the submitting
        // thread's QoS (`assignCurrentContext`). Except `.background`: Apple documents it as the
        // value a queue you create reads before anything was set, so it cannot tell "set" from
        // "unset", and making every such drain a background one would be worse; Foundation's
        // own rule applies then (the queue's QoS if it was set).
        let service = qualityOfService
        if service != .background { operation.qualityOfService = service }
        addOperation(operation)
    }
}

/// Delivers synchronously, on a thread that made a change.
///
/// The change that finds the receptionist idle runs the drain right away, on its own thread,
/// after every internal lock is released. Changes sent meanwhile from other threads (or from
/// inside the task block) are appended and delivered by that same drain, in order, before it
/// returns: so a task block may run on the thread of an *earlier* sender, and that sender's
/// `send` (or property write) returns only once the buffer is empty. The drain budget does not
/// apply (there is no other work to yield to). Task blocks still run one at a time, and one that
/// sends to its own receptionist does not recurse: the new change runs after it returns.
public struct ImmediateTarget: DeliveryTarget {
    public init() {}

    /// Runs `work` at once.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        work()
    }
}

extension DeliveryTarget where Self == ImmediateTarget {
    /// Synchronous delivery on the thread that made the change.
    public static var immediate: ImmediateTarget { ImmediateTarget() }
}
