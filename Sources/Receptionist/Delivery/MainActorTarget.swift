import Dispatch

/// Selects delivery on the main actor: pass ``mainActor`` where a target is expected, and the
/// task block becomes a `@MainActor` closure.
///
/// ```swift
/// @MainActor final class ReadingView { var shown: [Double] = [] }
///
/// let view = ReadingView()  // on the main actor
/// let receptionist = Receptionist<Double>(on: .mainActor) { reading in
///     view.shown.append(reading)            // main-actor isolated
/// }
/// ```
///
/// Drains are submitted to the main dispatch queue, which is the main actor's executor unless the
/// program replaces the main executor, so every task block runs isolated to the main actor. The
/// first task block of each receptionist checks it, in every build (debug builds check every
/// one): with a custom main executor that does not run the main queue, main-actor delivery stops
/// the program rather than run a task block off the main actor.
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
    /// per element: the drains run only on the main queue, so the isolation holds wherever the
    /// main queue is the main actor's executor, which ``MainActorIsolationCheck`` verifies.
    @inlinable
    static func mainActor(
        buffering policy: BufferPolicy = .unbounded,
        _ task: @escaping @MainActor (Element) -> Void
    ) -> Delivery {
        // Unsafe: drops the isolation of a closure that runs only on the main queue, checked by MainActorIsolationCheck (row: "receptionist → main queue (MainActor)")
        let onMainQueue = unsafeBitCast(task, to: (@Sendable (Element) -> Void).self)
        let isolation = MainActorIsolationCheck()
        return Delivery(on: DispatchQueue.main, buffering: policy) { element in
            isolation.check()
            onMainQueue(element)
        }
    }
}

/// Checks that main-queue drains run on the main actor, which the main-actor delivery's cast
/// assumes: the first task block of each receptionist in every build, every task block in debug
/// builds.
///
/// The main queue is the main actor's executor wherever Swift's default executors are Dispatch's,
/// as on every platform the library builds for (it needs Dispatch): `MainActor` enqueues its jobs
/// on the main queue, and the runtime takes code running there as isolated to it
/// (`MainActorIsolationTests` exercises this from threads of their own). A program built with a
/// custom executor factory (`-executor-factory`, Swift 6.2 and later) may give the main actor
/// another executor; drains on the main queue are then not on the main actor, and this check
/// stops the program at the first task block instead of running it unisolated. Once per
/// receptionist suffices: the main executor is chosen once, when the program starts. (A check
/// per task block in release builds would be a large share of the cost per change of the
/// benchmark row "receptionist → main queue (MainActor)"; once per receptionist costs nothing
/// measurable.)
@usableFromInline
final class MainActorIsolationCheck: Sendable {
    /// Whether this receptionist's first task block was found on the main actor.
    @usableFromInline
    let passed = AtomicValue<Bool>(false)

    @usableFromInline
    init() {}

    /// Called before each task block, on the main queue.
    @inlinable
    func check() {
        #if DEBUG
        verify()
        #else
        if !passed.load(ordering: .relaxed) { verify() }
        #endif
    }

    @usableFromInline
    func verify() {
        MainActor.preconditionIsolated(
            "Receptionist: a main-actor task block would run off the main actor (the main queue is not the main actor's executor: a custom main executor?)"
        )
        passed.store(true, ordering: .relaxed)
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

    /// Creates a receptionist whose task block is isolated to the main actor and whose
    /// watermarks count what its events weigh.
    ///
    /// The contract is that of ``init(on:buffering:weighing:_:)-(_,_,_,(Event)->Void)``, with
    /// `task` running on the main actor.
    public convenience init(
        on target: MainActorTarget,
        buffering policy: BufferPolicy,
        weighing: @escaping @Sendable (Event) -> Int,
        _ task: @escaping @MainActor (Event) -> Void
    ) {
        self.init(delivery: .mainActor(buffering: policy, task), weighing: weighing)
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

    /// Starts a pipeline fed by ``Receptionist/send(_:)`` whose task block is isolated to the main
    /// actor and whose watermarks count what its events weigh.
    ///
    /// The contract is that of ``deliver(on:buffering:weighing:_:)-(DeliveryTarget,_,_,_)``, with
    /// `task` running on the main actor.
    @inlinable
    public func deliver<Event>(
        on target: MainActorTarget,
        buffering policy: BufferPolicy,
        weighing: @escaping @Sendable (Event) -> Int,
        _ task: @escaping @MainActor (Output) -> Void
    ) -> Receptionist<Event> where Source == ReceptionistInput<Event> {
        start(.mainActor(buffering: policy, task), weighing: weighing)
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
