import Dispatch

/// A running observation of a model: one property, or a snapshot of several.
///
/// Its delivery engine buffers ``ChangeRecord``s under the model's lock (``SharedMachine``): a
/// write appends the record while it holds that lock for the value anyway, so it takes one lock,
/// and submits a drain only when the observation was idle. The drain builds each
/// ``ObservedChange`` from its record when it delivers it.
///
/// With stages, a write puts its change straight into the stages' intake instead (see
/// ``StagesIntake``), and the write that finds the intake idle runs the stages, after the lock;
/// the stages deliver to the target. The engine then buffers nothing: it only holds the stages'
/// feed, whose release when the engine ends finishes the stages.
@usableFromInline
final class ObservationEngine<Object: AnyObject & Sendable, Value: Sendable>: ObservationHandle, ModelObservation {
    @usableFromInline
    typealias Record = ChangeRecord<Value>
    @usableFromInline
    typealias Engine = DeliveryEngine<Record, SharedMachine<Record>>

    @usableFromInline let registry: ModelRegistry
    @usableFromInline let cell: MachineCell<Record>
    @usableFromInline let engine: Engine
    /// Submits a drain of the engine; formed once, so that a write that must submit one copies
    /// a reference instead of allocating a closure.
    @usableFromInline let submitDrain: @Sendable () -> Void
    /// The stages between the source and the target, if any.
    private let stages: (any StagesControl)?
    /// With stages whose senders never wait: their intake, which each write feeds (see
    /// ``append(_:model:batch:_:)``). `nil` without stages, and with stages behind a
    /// ``BufferPolicy/waiting(capacity:)`` delivery, whose intake the engine's drain feeds
    /// (a write cannot wait for room under the model's lock).
    @usableFromInline let stagesIntake: StagesIntake<ObservedChange<Object, Value>>?
    /// The key path of the changes a write hands to ``stagesIntake``.
    /// `nil` without ``stagesIntake``: a snapshot's key path holds its properties' storages
    /// (their values), which a token must not keep alive once the observation ended.
    @usableFromInline let keyPath: (KeyPath<Object, Value> & Sendable)?
    /// How to remove this observation from the storages it watches; called under the lock.
    private let registrations = Locked<[Registration]>([])

    /// - Parameters:
    ///   - delivery: where the changes go (the target, or the stages).
    ///   - stagesIntake: the stages' intake, if the writes feed it themselves.
    ///   - handler: makes the engine's handler (``handler(keyPath:task:)``);
    ///   - merge: how the buffer folds records, for `coalesce()`;
    ///   - submit: makes the closure that submits a drain of the engine. All three are formed by
    ///     the inlinable ``start(_:registry:keyPath:writesFeedStages:)``, where the types are known, so that the
    ///     per-change code is specialised for them.
    @usableFromInline
    init(
        registry: ModelRegistry,
        keyPath: KeyPath<Object, Value> & Sendable,
        delivery: Delivery<ObservedChange<Object, Value>>,
        stages: (any StagesControl)?,
        stagesIntake: StagesIntake<ObservedChange<Object, Value>>? = nil,
        handler: (MachineCell<Record>) -> @Sendable (Record) -> Void,
        merge: @escaping ReceptionistStateMachine<Record>.Merge,
        submit: (Engine) -> @Sendable () -> Void
    ) {
        validate(
            delivery.policy.kind != .waiting,
            "deliver(on:buffering:) policy .waiting(capacity:) applies to receptionists you send to: a write to an "
                + "observed property cannot wait for room (it is already made); use .dropOldest, .dropNewest or coalesce()"
        )
        let recordDelivery = delivery.handing(to: { (_: Record) in })
        // The only merge a pipeline of observed changes carries is coalesce()'s, which folds
        // changes as `absorb` folds their records.
        let merge = delivery.merge == nil ? nil : merge
        let placeholder = ReceptionistStateMachine<Record>(
            policy: recordDelivery.policy, merge: merge, clock: delivery.clock, handler: { _ in })
        let cell = MachineCell(placeholder)
        // The machine's handler needs the cell (the model it keeps alive while busy): put it in
        // now, before anything can reach the cell.
        let machine = ReceptionistStateMachine(
            policy: recordDelivery.policy, merge: merge, clock: delivery.clock, handler: handler(cell))
        registry.withLock { lock, _ in cell.withMachine(lock) { $0 = machine } }
        var engineDelivery = recordDelivery
        engineDelivery.merge = merge
        let engine = Engine(
            engineDelivery,
            state: SharedMachine(registry: registry, cell: cell),
            overflowTarget: stages?.stageQueue
        )
        self.registry = registry
        self.cell = cell
        self.engine = engine
        self.submitDrain = submit(engine)
        self.stages = stages
        self.stagesIntake = stagesIntake
        self.keyPath = stagesIntake == nil ? nil : keyPath
    }

    /// The running form of `plan`, fed with the changes of a property (or snapshot) of the model
    /// `registry` guards, whose key path is `keyPath`.
    @inlinable
    static func start<Output>(
        _ plan: PipelinePlan<ObservedChange<Object, Value>, Output>,
        registry: ModelRegistry,
        keyPath: KeyPath<Object, Value> & Sendable,
        writesFeedStages: Bool = true
    ) -> ObservationEngine {
        if let direct = plan.directDelivery {
            return ObservationEngine(
                registry: registry,
                keyPath: keyPath,
                delivery: direct,
                stages: nil,
                handler: handler(keyPath: keyPath, task: direct.handler),
                merge: { pending, new in pending.absorb(&new) },
                submit: { engine in { engine.submitDrain() } }
            )
        }
        // With stages: each write puts its change into the stages' intake, and the writing thread
        // runs them after the lock if they were idle (a burst continues on the library's stage
        // queue), as a hub post or a staged receptionist's send does. With a waiting delivery,
        // whose intake would make a write wait, the engine's drain feeds them instead.
        let stages = StagedPipeline(plan)
        let feed = StagesFeed(stages)
        // A snapshot's changes keep going through the engine: its key path, which a write would
        // need to build a change, holds the storages of its properties (see `keyPath`).
        let intake = stages.intake.waits || !writesFeedStages ? nil : StagesIntake(stages)
        // With `intake`, the engine gets no change: its handler only holds the feed, released
        // (finishing the stages after the last change the writes put in) when the engine ends.
        let delivery = Delivery<ObservedChange<Object, Value>>(on: .immediate, buffering: .unbounded) {
            feed.send($0)
        }.timed(by: plan.delivery.clock)
        return ObservationEngine(
            registry: registry,
            keyPath: keyPath,
            delivery: delivery,
            stages: stages,
            stagesIntake: intake,
            handler: handler(keyPath: keyPath, task: delivery.handler),
            merge: { pending, new in pending.absorb(&new) },
            submit: { engine in { engine.submitDrain() } }
        )
    }

    /// The engine's handler: builds each change from its record, with the model the cell keeps
    /// alive while the engine is busy, and runs `task`. Formed in inlinable code, so that building
    /// and delivering a change is specialised for the client's types.
    @inlinable
    static func handler(
        keyPath: KeyPath<Object, Value> & Sendable,
        task: @escaping @Sendable (ObservedChange<Object, Value>) -> Void
    ) -> (MachineCell<Record>) -> @Sendable (Record) -> Void {
        { cell in
            { record in
                // Read between the drain's locked steps, while the engine is busy: set by the
                // write that made it busy, cleared only once it is idle again.
                task(change(record, of: cell.ownerWhileDraining, keyPath: keyPath))
            }
        }
    }

    /// The change `record` describes, of `model`, the model of this observation.
    @inlinable
    static func change(
        _ record: consuming Record,
        of model: AnyObject,
        keyPath: KeyPath<Object, Value> & Sendable
    ) -> ObservedChange<Object, Value> {
        ObservedChange(
            // Unsafe: `model` is the model of this observation, whose class is Object; a checked cast costs every delivered change (row: "@Observed → DispatchQueue (lossless)")
            object: unsafeDowncast(model, to: Object.self),
            keyPath: keyPath,
            oldValue: record.old,
            newValue: record.new,
            isInitial: record.isInitial,
            count: record.count
        )
    }

    /// Buffers `record` for `model`, by a write. Always inlined into the observer's closure: left
    /// to the inliner, it is not inlined into a snapshot's record, and every change pays the call
    /// (the "snapshot of 2 @Observed" row).
    ///
    /// With ``stagesIntake``, the change goes straight to the stages' intake instead, so that the
    /// write that finds the stages idle runs them for its change after the lock.
    @inlinable @inline(__always)
    func append(_ record: consuming Record, model: AnyObject, batch: inout WriteBatch, _ lock: borrowing ModelLock) {
        if let stagesIntake {
            stagesIntake.enqueue(Self.change(record, of: model, keyPath: keyPath!), batch: &batch, lock)
            return
        }
        if engine.signalsWritability {
            appendFlowControlled(record, model: model, batch: &batch, lock)
            return
        }
        if cell.enqueue(record, model: model, batch: &batch, lock, fold: { pending, new in pending.absorb(&new) }) {
            batch.submitAfterwards(submitDrain)
        }
    }

    /// ``append(_:model:batch:_:)`` under a ``BufferPolicy/watermarks(low:high:)`` policy: the
    /// level is brought up to date before, and a change of writability is signalled after the
    /// model's lock.
    @usableFromInline
    func appendFlowControlled(
        _ record: consuming Record, model: AnyObject, batch: inout WriteBatch, _ lock: borrowing ModelLock
    ) {
        cell.withMachine(lock) { engine.refreshLevel(&$0) }
        if cell.enqueue(record, model: model, batch: &batch, lock, fold: { pending, new in pending.absorb(&new) }) {
            batch.submitAfterwards(submitDrain)
        }
        let wake = cell.withMachine(lock) { machine in
            engine.publishFlow(machine)
            return machine.waitersToWake()
        }
        for waiter in wake { batch.submitAfterwards { waiter.wake() } }
    }

    /// Registers on the storages `watchers` name, and runs `initially`, all under one
    /// acquisition of the model's lock, so that an initial value and the changes after it form
    /// one chain, and a snapshot starts from one state.
    @usableFromInline
    func watch(_ watchers: [Watcher], initially: (inout WriteBatch, borrowing ModelLock) -> Void = { _, _ in }) {
        var batch = WriteBatch()
        registrations.withLock { $0.append(contentsOf: watchers.map(\.registration)) }
        registry.withLockThenRelease { lock, state in
            guard !state.isEnded else { return ((), released: batch.takeGarbage()) }
            for watcher in watchers { watcher.attach(lock) }
            state.observations.append(self)  // once: an observation starts once
            initially(&batch, lock)
            return ((), released: batch.takeGarbage())
        }
        batch.submitDrains()
    }

    /// Removes the observation from its storages and from the model's list; what it took out is
    /// released after the lock. Idempotent.
    ///
    /// The registrations are taken out, not copied: each holds the observer, whose closure holds
    /// this observation, so kept they would keep the observation (and through it the model's
    /// registry, its storages and every value they hold) alive for ever.
    private func detach() {
        let registrations = self.registrations.withLock { registrations in
            defer { registrations = [] }
            return registrations
        }
        registry.withLockThenRelease { lock, state in
            var removed: [AnyObject?] = []
            for registration in registrations { removed.append(registration.remove(lock)) }
            let listed = state.observations.firstIndex { $0 === self }.map { state.observations.remove(at: $0) }
            return ((), released: (removed, listed, registrations))
        }
    }

    @usableFromInline
    func cancel() {
        detach()
        stages?.cancel()
        engine.cancel()
    }

    @usableFromInline
    func ownerReleased() {
        if engine.isActive { cancel() }
    }

    /// No change made after this returns enters; what is pending is delivered, then the stages
    /// (if any) hand on what they hold (see ``StagesFeed``), then the task block is released.
    @usableFromInline
    func finish() {
        detach()
        engine.finish()
    }

    @usableFromInline
    func whenEnded(_ completion: @escaping @Sendable () -> Void) {
        if let stages { stages.whenEnded(completion) } else { engine.whenEnded(completion) }
    }

    @usableFromInline
    func modelDidEnd() {
        finish()
    }

    @usableFromInline
    func flush() { stages?.flush() }
    @usableFromInline
    var isCancelled: Bool { stages?.isCancelled ?? engine.isCancelled }
    @usableFromInline
    var isFinished: Bool { stages?.isFinished ?? engine.isFinished }
    /// With stages, what waits in front of them includes the changes this engine holds for them.
    @usableFromInline
    var statistics: ReceptionistStatistics {
        guard let stages else { return engine.statistics }
        let own = engine.statistics
        return stages.statistics.adding(
            pendingBeforeStages: own.pending + own.inFlight, max: own.maxPending, timing: own.timing)
    }

    /// With stages, their intake pauses the writers (the changes this engine holds for them are
    /// handed on at once).
    @usableFromInline
    var writability: Writability { stages?.writability ?? engine.writability }

    @usableFromInline
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {
        if let stages { stages.whenWritable(on: target, resume) } else { engine.whenWritable(on: target, resume) }
    }

    @usableFromInline
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        if let stages { return stages.onWritabilityChange(on: target, handler) }
        return engine.onWritabilityChange(on: target, handler)
    }

    @usableFromInline
    var intakeStatistics: ReceptionistStatistics? { stagesIntake?.stages.intake.statistics }
}

/// One storage an observation watches, with the observer it registers there: how to attach it
/// and how to remove it, both under the model's lock.
@usableFromInline
struct Watcher: Sendable {
    let attach: @Sendable (borrowing ModelLock) -> Void
    let registration: Registration

    @usableFromInline
    init<Watched>(_ storage: PropertyStorage<Watched>, _ observer: ValueObserver<Watched>) {
        attach = { lock in storage.withObservers(lock) { $0.append(observer) } }
        registration = Registration(storage: storage, observer: observer)
    }
}

/// One registration of an observation on a storage, to be removed when the observation ends.
struct Registration: Sendable {
    /// Removes the observer from the storage, under the model's lock. Returns the observer, for
    /// the caller to release after the lock.
    let remove: @Sendable (borrowing ModelLock) -> AnyObject?

    init<Watched>(storage: PropertyStorage<Watched>, observer: ValueObserver<Watched>) {
        remove = { lock in
            storage.withObservers(lock) { observers in
                guard let index = observers.firstIndex(where: { $0 === observer }) else { return nil }
                return observers.remove(at: index)
            }
        }
    }
}
