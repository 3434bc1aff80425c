import Dispatch

/// Delivery to any actor: pass the actor where a target is expected, and the task block runs
/// isolated to it, receiving it as an `isolated` parameter.
///
/// ```swift
/// actor Store {
///     var readings: [Reading] = []
///     func add(_ batch: [Reading]) { readings += batch }
/// }
/// let store = Store()
/// let receptionist = Receptionist.pipeline(of: Reading.self)
///     .batch(count: 100, every: .milliseconds(50))
///     .deliver(on: store) { store, batch in store.add(batch) }   // isolated to `store`
/// ```
///
/// A burst costs one hop, as on every target: each drain runs in one task on the actor, and runs
/// the task block for each pending output in order, then the next drain starts (at most 256
/// blocks per task, so that other work on the actor gets its turn). Not one task per change,
/// which would neither keep order nor stay cheap.
///
/// The drain's task is a detached task at priority `.medium`, created when a burst starts: it
/// serves the changes of every sender, so it takes neither the priority nor the task-local
/// values of the one that happened to start the burst (see
/// <doc:ThreadingGuarantees#Quality-of-service>). The task block is synchronous: to `await`
/// inside it, start a task there.
///
/// `MainActor.shared` is the exception: passed as the actor, it takes the ``MainActorTarget``
/// path (drains on the main queue, the main actor's executor), so `deliver(on: MainActor.shared)`
/// and `deliver(on: .mainActor)` deliver the same way.
struct ActorTarget<Isolation: Actor>: DeliveryTarget {
    let actor: Isolation

    func submit(_ work: @escaping @Sendable () -> Void) {
        let actor = actor
        Task.detached(priority: Self.drainPriority) { await run(work, on: actor) }
    }

    /// The priority of every drain's task: that of the `.default` QoS, which ``qos(of:)`` gives
    /// an actor's pipeline for its own queues.
    static var drainPriority: TaskPriority { .medium }
}

/// Runs `work` isolated to `actor`.
private func run<Isolation: Actor>(_ work: @Sendable () -> Void, on actor: isolated Isolation) {
    work()
}

extension Delivery {
    /// The one way the library delivers to an actor: drains in a task on the actor, each task
    /// block given the actor as `isolated`.
    ///
    /// The task block is called as the plain function it is underneath (an `isolated` parameter
    /// does not change a function's calling convention), not through `assumeIsolated` per
    /// element, which allocates on every call: the drains run only inside a task isolated to
    /// `actor`, so the isolation holds by construction. Debug builds check it.
    static func actor<Isolation: Actor>(
        _ actor: Isolation,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (isolated Isolation, Element) -> Void
    ) -> Delivery {
        // Unsafe: drops `isolated` from a closure that runs only in a task on `actor`, checked in debug builds (row: "receptionist → actor")
        let onActor = unsafeBitCast(task, to: (@Sendable (Isolation, Element) -> Void).self)
        // The main actor's executor is the main queue: `MainActor.shared` takes the `.mainActor`
        // path (drains on the main queue, no task per burst), with the same contract.
        let target: any DeliveryTarget =
            (actor as AnyObject) === MainActor.shared ? DispatchQueue.main : ActorTarget(actor: actor)
        return Delivery(on: target, buffering: policy) { element in
            #if DEBUG
            actor.preconditionIsolated("Receptionist: an actor's task block ran off the actor")
            #endif
            onActor(actor, element)
        }
    }
}

extension Receptionist {
    /// Creates a receptionist whose task block runs isolated to `actor`.
    ///
    /// The contract is that of ``init(on:buffering:_:)-(DeliveryTarget,_,_)``, with `task`
    /// running on `actor`, which it receives as `isolated`; see ``Pipeline/deliver(on:buffering:_:)-(Isolation,_,_)``.
    public convenience init<Isolation: Actor>(
        on actor: Isolation,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (isolated Isolation, Event) -> Void
    ) {
        self.init(delivery: .actor(actor, buffering: policy, task))
    }
}

extension Pipeline {
    /// Starts the pipeline with a task block isolated to `actor`.
    ///
    /// The contract is that of ``deliver(on:buffering:_:)-(DeliveryTarget,_,_)``: outputs arrive
    /// one at a time, in order; a burst costs one hop (a task on the actor runs the task block for
    /// each pending output). `task` receives the actor as `isolated`, so it can use the actor's
    /// state synchronously.
    public func deliver<Isolation: Actor>(
        on actor: Isolation,
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @Sendable (isolated Isolation, Output) -> Void
    ) -> Source.Handle {
        start(.actor(actor, buffering: policy, task))
    }
}

extension Hub {
    /// Subscribes `handler`, isolated to `actor`, to `channel`.
    ///
    /// The contract is that of ``subscribe(to:from:on:_:)-(_,_,DeliveryTarget,_)``, with
    /// `handler` running on `actor`, which it receives as `isolated`.
    public func subscribe<Payload, Isolation: Actor>(
        to channel: Channel<Payload>,
        from sender: AnyObject? = nil,
        on actor: Isolation,
        _ handler: @escaping @Sendable (isolated Isolation, Payload) -> Void
    ) -> Subscription {
        subscribe(to: channel, from: sender, .actor(actor, handler))
    }
}

extension ObserverSet {
    /// Adds `observer`, whose messages run isolated to `actor`, one at a time, in order.
    ///
    /// The contract is that of ``add(_:on:)-(_,DeliveryTarget)``.
    @discardableResult
    public func add<Isolation: Actor>(_ observer: Observer, on actor: Isolation) -> Bool {
        insert(observer) { handler in .actor(actor) { _, message in handler(message) } }
    }
}
