import Dispatch
import Foundation

/// The quality of service at which `target` runs the drains submitted to it, and at which a
/// pipeline delivering to it runs work of its own: its time-based stages' default timer queues,
/// and the queue its stages continue on after a burst. The rule for each kind of target is in
/// <doc:ThreadingGuarantees#Quality-of-service>.
///
/// - A `DispatchQueue`: its `qos`; `.default` for a queue without one (the QoS of the global
///   queue such a queue targets unless given another target); `.userInteractive` for the main
///   queue (the main thread's).
/// - An `OperationQueue`: its `qualityOfService` (`.userInteractive` for `OperationQueue.main`),
///   except `.default` when it reads `.background`, Apple's documented value of a queue whose
///   `qualityOfService` was never set.
/// - Any other target (an actor, ``ImmediateTarget``, a target of your own): `.default`, the QoS
///   matching the priority (`.medium`) of an actor's drain task.
func qos(of target: any DeliveryTarget) -> DispatchQoS {
    switch target {
    case let queue as DispatchQueue:
        if queue.isMainQueue { return .userInteractive }
        let qos = queue.qos
        return qos.qosClass == .unspecified ? .default : qos
    case let queue as OperationQueue:
        // `.background` may only mean "never set" (see `OperationQueue.submit(_:)`).
        let service = queue.qualityOfService
        return service == .background ? .default : DispatchQoS(service)
    default:
        return .default
    }
}

extension DispatchQoS {
    /// The dispatch QoS of an operation queue's `qualityOfService`.
    init(_ qualityOfService: QualityOfService) {
        switch qualityOfService {
        case .userInteractive: self = .userInteractive
        case .userInitiated: self = .userInitiated
        case .utility: self = .utility
        case .background: self = .background
        case .default: self = .default
        @unknown default: self = .default
        }
    }
}

extension DispatchQueue {
    /// Whether this is the main queue. `DispatchQueue.main` is a new wrapper on each read on
    /// Linux: labels are compared, not only identity.
    var isMainQueue: Bool {
        self === DispatchQueue.main || label == DispatchQueue.main.label
    }
}
