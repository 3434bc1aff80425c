import Dispatch
import Foundation

/// How outputs reach a task block: the target the drains are submitted to, the handler that runs
/// there, the buffer policy, and the merge of a coalescing pipeline.
///
/// Every public entry point that takes a target (a receptionist's initialiser, a pipeline's
/// `deliver`, a hub subscription, an observer added with a target) turns its target and task
/// block into one of these; everything after that is the same for every kind of target. The
/// kinds of target differ only in how the task block is called: a `@Sendable` block on a
/// ``DeliveryTarget`` (``init(on:buffering:_:)``), a `@MainActor` block on the main queue
/// (``mainActor(buffering:_:)``, in `MainActorTarget.swift`).
///
/// Adding a kind of target is one new file: the target type, its factory of `Delivery` values,
/// and its one-line public overloads (see `MainActorTarget.swift`). Other files touched: the
/// DocC landing page (`Receptionist.md`, Topics) and the README's table of targets.
@usableFromInline
struct Delivery<Element: Sendable>: Sendable {
    @usableFromInline
    typealias Handler = @Sendable (Element) -> Void

    @usableFromInline let target: any DeliveryTarget
    @usableFromInline let handler: Handler
    @usableFromInline var policy: BufferPolicy
    /// For a coalescing pipeline: how a new output is folded into the one still waiting.
    @usableFromInline var merge: ReceptionistStateMachine<Element>.Merge?
    /// How many task blocks a drain runs before it gives the target back.
    @usableFromInline var drainBudget = ReceptionistCore<Element>.defaultDrainBudget
    /// Where the timing of the statistics is read (a test's manual clock, or the system's).
    @usableFromInline var clock = DeliveryClock.system
    /// Whether every task block is timed against ``MainThreadBudget`` (set for the main queue;
    /// tests set it for a target they run by hand).
    @usableFromInline var watchesMainThreadBudget: Bool
    /// For a ``BufferPolicy/watermarks(low:high:)`` buffer: what each element weighs against the
    /// watermarks (`nil`: 1 each), shared by the engine and its machine's handler.
    @usableFromInline var weighing: Weighing<Element>?

    /// Delivery of `handler` on `target`.
    @usableFromInline
    init(on target: some DeliveryTarget, buffering policy: BufferPolicy, _ handler: @escaping Handler) {
        self.target = target
        self.handler = handler
        self.policy = policy
        self.watchesMainThreadBudget = Self.isMain(target)
    }

    /// Whether `target` runs its work on the main thread: the main queue (also behind every
    /// main-actor delivery) or the main operation queue.
    @usableFromInline
    static func isMain(_ target: some DeliveryTarget) -> Bool {
        if let queue = target as? DispatchQueue { return queue.isMainQueue }
        if let queue = target as? OperationQueue { return queue === OperationQueue.main }
        return false
    }

    /// This delivery with `merge` folding outputs in its buffer (`nil`: unchanged).
    @usableFromInline
    func merging(with merge: ReceptionistStateMachine<Element>.Merge?) -> Delivery {
        guard let merge else { return self }
        var delivery = self
        delivery.merge = merge
        return delivery
    }

    /// This delivery with its timing read from `clock` (that of the delivery it serves).
    @usableFromInline
    func timed(by clock: DeliveryClock) -> Delivery {
        var delivery = self
        delivery.clock = clock
        return delivery
    }

    /// The same target, policy and drain budget, running `handler` instead (without a merge).
    func handing<Other>(to handler: @escaping @Sendable (Other) -> Void) -> Delivery<Other> {
        var other = Delivery<Other>(on: target, buffering: policy, handler)
        other.drainBudget = drainBudget
        other.clock = clock
        other.watchesMainThreadBudget = watchesMainThreadBudget
        return other
    }

    /// The state machine of an engine that delivers this way.
    func makeMachine() -> ReceptionistStateMachine<Element> {
        // Not `weighing.map { … } ?? handler`: a closure through a generic `map` comes back
        // behind a reabstraction thunk, which every task block would then run through.
        var handler = handler
        if let weighing { handler = weighing.counting(handler) }
        return ReceptionistStateMachine(
            policy: policy, merge: merge, weighs: weighing != nil, clock: clock, handler: handler)
    }

    /// The delivery engine.
    @usableFromInline
    func makeCore() -> ReceptionistCore<Element> {
        ReceptionistCore(self)
    }
}

/// What each element of a weighed ``BufferPolicy/watermarks(low:high:)`` buffer weighs
/// (``Receptionist/init(on:buffering:weighing:_:)-(_,_,_,(Event)->Void)``), and what those whose task blocks returned
/// weighed in all: the engine weighs an element as it is accepted, and its machine's handler
/// (``counting(_:)``) weighs it again before its task block and adds that once the block returned.
/// An unweighed engine's task blocks run unwrapped, so its drain pays nothing for weights.
@usableFromInline
final class Weighing<Element>: Sendable {
    @usableFromInline let weigh: @Sendable (Element) -> Int
    /// The weight of the elements whose task blocks returned. Written by the drain only (drains
    /// never overlap), read under the engine's lock as ``DeliveryEngine/deliveredCount`` is.
    @usableFromInline let delivered = AtomicValue<Int>(0)
    /// The delivered weight at which a paused producer may go on, as ``DeliveryEngine/resumeAt``
    /// is for a count (`Int.max` when not paused).
    @usableFromInline let resumeAt = AtomicValue<Int>(.max)

    /// The type the user weighs, for the message about a negative weight (a pipeline's intake
    /// weighs its events inside an event type of its own).
    @usableFromInline let weighed: Any.Type

    @usableFromInline
    init(weighing weighed: Any.Type = Element.self, _ weigh: @escaping @Sendable (Element) -> Int) {
        self.weighed = weighed
        self.weigh = weigh
    }

    /// What `element` weighs: the user's weighing, called outside every lock, which must answer
    /// at least 0 (anything else stops the program with a message naming `weighing`).
    @inlinable
    func weight(of element: Element) -> Int {
        let weight = weigh(element)
        if weight < 0 {
            invalidConfiguration(
                "weighing: an element of \(weighed) weighed \(weight); a weight must be at least 0")
        }
        return weight
    }

    /// `handler`, adding what each element weighed to ``delivered`` once its task block returned.
    /// Weighed before the block, which may consume what the weight is of.
    func counting(_ handler: @escaping @Sendable (Element) -> Void) -> @Sendable (Element) -> Void {
        { element in
            let weight = self.weight(of: element)
            handler(element)
            self.delivered.store(self.delivered.load(ordering: .relaxed) &+ weight, ordering: .relaxed)
        }
    }
}
