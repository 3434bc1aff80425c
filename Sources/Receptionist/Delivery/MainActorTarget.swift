import Dispatch

/// Selects delivery on the main actor: pass ``mainActor`` where a target is expected, and the
/// task block becomes a `@MainActor` closure.
///
/// ```swift
/// let receptionist = Receptionist<Reading>(on: .mainActor) { reading in
///     view.show(reading)            // main-actor isolated
/// }
/// ```
///
/// Drains are submitted to the main dispatch queue, which is the main actor's executor on every
/// platform Swift supports, so every task block runs isolated to the main actor (checked in
/// debug builds).
///
/// Task blocks are isolated to the main actor on every platform; which *thread* services the main
/// queue on Linux is in <doc:ThreadingGuarantees#Linux-and-Apple-platforms>.
///
/// It is deliberately not a ``DeliveryTarget``: that keeps `on: .mainActor` from resolving to an
/// overload whose task block is not main-actor isolated. Every API that takes a target has a
/// main-actor overload, in this file.
public struct MainActorTarget: Sendable {
    /// The main actor.
    public static var mainActor: MainActorTarget { MainActorTarget() }

    private init() {}
}

extension Delivery {
    /// The one way the library delivers to the main actor: drains on the main queue, where every
    /// task block is on the main actor.
    ///
    /// The task block is called as the plain function it is underneath (global-actor isolation
    /// does not change a function's calling convention), not through `MainActor.assumeIsolated`
    /// per element, which allocates on every call: the drains run only on the main queue, the
    /// main actor's executor, so the isolation holds by construction. Debug builds check it.
    @inlinable
    static func mainActor(
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (Element) -> Void
    ) -> Delivery {
        let onMainQueue = unsafeBitCast(task, to: (@Sendable (Element) -> Void).self)
        return Delivery(on: DispatchQueue.main, buffering: policy) { element in
            #if DEBUG
            MainActor.preconditionIsolated("Receptionist: a main-actor task block ran off the main actor")
            #endif
            onMainQueue(element)
        }
    }
}

extension Receptionist {
    /// Creates a receptionist whose task block is isolated to the main actor.
    ///
    /// The contract is that of ``init(on:buffering:_:)-(DeliveryTarget,_,_)``, with `task`
    /// running on the main actor.
    public convenience init(
        on target: MainActorTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (Event) -> Void
    ) {
        self.init(delivery: .mainActor(buffering: policy, task))
    }
}

extension Pipeline {
    /// Starts the pipeline with a task block isolated to the main actor.
    ///
    /// The contract is that of ``deliver(on:buffering:_:)-(DeliveryTarget,_,_)``, with `task`
    /// running on the main actor.
    @inlinable
    public func deliver(
        on target: MainActorTarget,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (Output) -> Void
    ) -> Source.Handle {
        start(.mainActor(buffering: policy, task))
    }
}

extension Hub {
    /// Subscribes a main-actor `handler` to `channel`.
    ///
    /// The contract is that of ``subscribe(to:from:on:_:)-(_,_,DeliveryTarget,_)``, with
    /// `handler` running on the main actor.
    public func subscribe<Payload>(
        to channel: Channel<Payload>,
        from sender: AnyObject? = nil,
        on target: MainActorTarget,
        _ handler: @escaping @MainActor (Payload) -> Void
    ) -> Subscription {
        subscribe(to: channel, from: sender, .mainActor(handler))
    }
}

extension ObserverSet {
    /// Adds `observer`, whose messages run on the main actor.
    ///
    /// The contract is that of ``add(_:on:)-(_,DeliveryTarget)``.
    @discardableResult
    public func add(_ observer: Observer, on target: MainActorTarget) -> Bool {
        insert(observer) { .mainActor($0) }
    }
}
