/// The lock of one model — an ``ObservableModel`` or a standalone ``ObservableValue`` — and the
/// bookkeeping of its observations.
///
/// One lock per model guards the values of all the model's observed properties
/// (``PropertyStorage``), the buffers of all their observations (``MachineCell``), the last
/// state of its snapshot observations (``SnapshotTrigger``) and the list of observations. So a
/// write takes one lock to store the value and to append the change for every observation; a
/// transaction writes several properties atomically; a snapshot reads several properties
/// consistently; and every observation sees the writes in the order they were applied.
///
/// The model's own bookkeeping is the locked ``State``. The fields the lock guards in other
/// objects are reached only through accessors that take a ``ModelLock``, the proof that the lock
/// is held, which only ``withLock(_:)`` and ``withLockThenRelease(_:)`` hand out (it is made from
/// the locked ``State``, which only this file can create): every access shows which lock guards
/// it. The one read without the lock is the lookup of a property's storage by key path
/// (``KnownStorageIndex``, with its publication protocol).
///
/// Decide under the lock, act outside it: what a write decides to do afterwards (submit drains,
/// release values) is collected in a ``WriteBatch`` and done after the lock is released.
@usableFromInline
final class ModelRegistry: Sendable {
    /// Noncopyable, and only this file makes one (for ``state``): the only `inout State` is the
    /// one the lock lends, which is what makes a ``ModelLock`` a proof.
    @usableFromInline
    struct State: ~Copyable {
        /// Every observation attached to the model, so that the model's deallocation ends them,
        /// in the order they attached. An array, not a dictionary by identity: removing one
        /// scans it, as removing its observer from the property's list does anyway, and a
        /// dictionary would cost every observed model 128 bytes.
        var observations: [any ModelObservation] = []
        /// The model was deallocated: nothing attaches any more.
        var isEnded = false
        /// The storages found so far by key path (see ``KnownStorageIndex``).
        var knownStorages = KnownStorageIndex.Nodes()
        /// The model's `ObservationRegistrar`, boxed (the type is not available on every OS the
        /// library supports); made by the first read of a property through its getter.
        var observationRegistrar: (any AnyObject & Sendable)?
        #if DEBUG
        /// The model's identity, which its ``ModelLock`` carries in debug builds.
        @usableFromInline
        let identity = ModelIdentity()
        #endif

        fileprivate init() {}
    }

    /// Reach it through ``withLock(_:)`` or ``withLockThenRelease(_:)``, which hand out the
    /// proof that the lock is held.
    @usableFromInline
    let state = Locked(State())
    /// The storages found so far by key path, for lookups without the lock.
    private let known = KnownStorageIndex()

    @usableFromInline
    init() {}

    /// Stores `newValue` in `storage` and hands the change, attributed to `model`, to every
    /// observation of the property; afterwards, submits the drains that became due and releases
    /// the old value.
    ///
    /// A property Observation may be tracking (it has a notifier) is written by
    /// ``writeNotifying(_:to:of:_:)`` instead: the check and an untracked write are one critical
    /// section, so a write either sees the notifier or was applied before the read that made it.
    @inlinable
    func write<Value>(_ newValue: Value, to storage: PropertyStorage<Value>, of model: AnyObject) {
        var batch = WriteBatch()
        let writer = currentThreadIdentity()
        let notifier = withLockThenRelease {
            lock, _ -> ((any ObservationNotifier)?, released: (Value, [any Sendable]?)?) in
            if let notifier = storage.observationNotifier(lock) { return (notifier, released: nil) }
            let old = storage.replace(with: newValue, writer: writer, model: model, into: &batch, lock)
            // The old value and what observations evicted die after the lock: user deinits.
            return (nil, released: (old, batch.takeGarbage()))
        }
        guard let notifier else {
            batch.submitDrains()
            return
        }
        writeNotifying(newValue, to: storage, of: model, notifier)
    }

    /// Writes a property Observation may be tracking: `willSet` before the write, `didSet`
    /// after it, both outside the lock (they run Observation's `onChange` handlers).
    ///
    /// Inlinable so that it is specialised with the setter: unspecialised, the generic critical
    /// section looks up tuple metadata at run time, on every write, which makes it several times
    /// slower.
    @inlinable
    func writeNotifying<Value>(
        _ newValue: Value,
        to storage: PropertyStorage<Value>,
        of model: AnyObject,
        _ notifier: any ObservationNotifier
    ) {
        assertNoLockHeld("telling Observation of a write")
        notifier.willSet(model)
        var batch = WriteBatch()
        let writer = currentThreadIdentity()
        withLockThenRelease { lock, _ in
            let old = storage.replace(with: newValue, writer: writer, model: model, into: &batch, lock)
            return ((), released: (old, batch.takeGarbage()))
        }
        batch.submitDrains()
        notifier.didSet(model)
    }

    /// Atomically replaces the value in `storage` with the result of `body` applied to it, as
    /// one change; see ``ObservableValue/update(_:)``. Commits by the library's one retry
    /// protocol (``commitOptimistically(notified:model:misuse:attempt:)``): if Observation may be
    /// tracking the property, it gets one `willSet` before the commit and one `didSet` once the
    /// update ends (also if `body` throws), however many times `body` runs.
    ///
    /// Inlinable, like ``write(_:to:of:)``, so that the critical sections are specialised.
    @inlinable
    func update<Value, Result>(
        _ storage: PropertyStorage<Value>,
        of model: AnyObject,
        _ body: (inout Value) throws -> Result
    ) rethrows -> Result {
        let writer = currentThreadIdentity()
        // Observation was told of this update (willSet): owed a didSet.
        var notified: [any ObservationNotifier] = []
        defer { for notifier in notified { notifier.didSet(model) } }
        while true {
            let (current, version) = withLock { lock, _ in (storage.value(lock), storage.version(lock)) }
            var proposed = current
            assertNoLockHeld("running an update closure")
            let result = try body(&proposed)
            let committed = commitOptimistically(notified: &notified, model: model, misuse: Self.updateMisuse) {
                notified, batch in
                withLockThenRelease { lock, _ -> (CommitAttempt, released: (Value, [any Sendable]?)?) in
                    guard storage.version(lock) == version else {
                        return (.conflict(selfInflicted: storage.lastWriter(lock) == writer), released: nil)
                    }
                    if notified.isEmpty, let notifier = storage.observationNotifier(lock) {
                        return (.notifyFirst([notifier]), released: nil)
                    }
                    let old = storage.replace(with: proposed, writer: writer, model: model, into: &batch, lock)
                    return (.committed, released: (old, batch.takeGarbage()))
                }
            }
            if committed { return result }
        }
    }

    @usableFromInline
    static var updateMisuse: String {
        "update(_:) body wrote the value it is updating; that update could never commit. Compute "
            + "the new value in the closure; write it only through its argument."
    }

    /// Reads `storage`, and its notifier, for a getter: it tells Observation of the read.
    @inlinable
    func readForAccess<Value>(_ storage: PropertyStorage<Value>) -> (Value, (any ObservationNotifier)?) {
        withLock { lock, _ in (storage.value(lock), storage.observationNotifier(lock)) }
    }

    /// Reads `storage`.
    @inlinable
    func read<Value>(_ storage: PropertyStorage<Value>) -> Value {
        withLock { lock, _ in storage.value(lock) }
    }

    /// The storage a lookup through this very key path object found, if any; without the lock
    /// (see ``KnownStorageIndex``).
    @usableFromInline
    func knownStorage(for keyPath: AnyKeyPath) -> (any AnyObject & Sendable)? {
        known.find(keyPath)
    }

    /// The storage a key path equal to `keyPath` (another object) found, if any; recorded for
    /// `keyPath` too (see ``KnownStorageIndex/findEqual(_:in:)``).
    func equalKnownStorage(for keyPath: SendableKeyPath) -> (any AnyObject & Sendable)? {
        withLock { _, state in known.findEqual(keyPath, in: &state.knownStorages) }
    }

    /// Records that `keyPath` names `storage`, for later lookups.
    func record(_ storage: any AnyObject & Sendable, for keyPath: SendableKeyPath) {
        withLock { _, state in known.record(storage, for: keyPath, in: &state.knownStorages) }
    }

    /// The model is being deallocated: every observation ends (delivers what is pending, which
    /// is nothing, since pending changes keep the model alive, and releases its task block).
    ///
    /// The list of known storages goes too: an observation keeps this registry (its lock) for as
    /// long as its token lives, and the list would keep every storage, with the value it holds,
    /// alive with it. Nobody walks the list any more: a lookup needs the model, and this runs in
    /// the model's `deinit`.
    func modelDidEnd() {
        let observations = withLockThenRelease { _, state in
            state.isEnded = true
            let known = known.clear(&state.knownStorages)
            defer { state.observations = [] }
            return (state.observations, released: known)
        }
        for observation in observations {
            observation.modelDidEnd()
        }
    }
}

#if DEBUG
/// A model's identity in debug builds (an object, so that no other model has it while this one
/// lives): see ``ModelLock``.
@usableFromInline
final class ModelIdentity: Sendable {
    init() {}
}
#endif

/// What an observation does when its model is deallocated.
protocol ModelObservation: AnyObject, Sendable {
    func modelDidEnd()
}

/// What a write under a model's lock leaves to do once the lock is released: drains to submit
/// and values to release. Nothing is allocated unless there is more than one drain, something to
/// release, or a snapshot a transaction defers.
///
/// Three fields and one reference: every write makes one and destroys it, and destroying the six
/// optional fields it had cost each write about 60 instructions (row "ObservableValue +
/// coalesce() → DispatchQueue"); the rest of what a write rarely leaves is in ``rest``.
@usableFromInline
struct WriteBatch {
    @usableFromInline var firstDrain: (@Sendable () -> Void)?
    /// In a transaction: snapshots record once all its writes are applied, not once per write.
    @usableFromInline var defersSnapshots = false
    /// The first snapshot a transaction touched (``deferSnapshot(_:)``).
    @usableFromInline var firstDeferred: DeferredSnapshot?
    /// The second drain on, the values to release, the second deferred snapshot on; `nil` until
    /// needed.
    @usableFromInline var rest: WriteBatchRest?

    @inlinable
    init() {}

    /// ``rest``, made on first need.
    @inlinable
    mutating func restMade() -> WriteBatchRest {
        if let rest { return rest }
        let made = WriteBatchRest()
        rest = made
        return made
    }

    /// Records `snapshot` once the transaction's writes are applied. The snapshot defers itself
    /// once per transaction (it keeps a mark, under the lock).
    @inlinable
    mutating func deferSnapshot(_ snapshot: DeferredSnapshot) {
        if firstDeferred == nil {
            firstDeferred = snapshot
        } else {
            restMade().deferred.append(snapshot)
        }
    }

    /// Records the snapshots the transaction touched, as changes of `model`.
    mutating func recordDeferredSnapshots(model: AnyObject, _ lock: borrowing ModelLock) {
        defersSnapshots = false
        if let first = firstDeferred.take() { first.record(first.trigger, model, &self, lock) }
        guard let rest, !rest.deferred.isEmpty else { return }
        let deferred = rest.deferred
        rest.deferred = []
        for snapshot in deferred { snapshot.record(snapshot.trigger, model, &self, lock) }
    }

    /// `submitDrain` must run after the lock is released.
    @inlinable
    mutating func submitAfterwards(_ submitDrain: @escaping @Sendable () -> Void) {
        if firstDrain == nil {
            firstDrain = submitDrain
        } else {
            restMade().drains.append(Drain(submit: submitDrain))
        }
    }

    /// `value` must be released after the lock is released.
    @inlinable
    mutating func release<Value: Sendable>(_ value: Value) {
        restMade().garbage.append(value)
    }

    /// Takes what must be released after the lock.
    @inlinable
    mutating func takeGarbage() -> [any Sendable]? {
        guard let rest, !rest.garbage.isEmpty else { return nil }
        defer { rest.garbage = [] }
        return rest.garbage
    }

    @inlinable
    func submitDrains() {
        firstDrain?()
        if let rest {
            for drain in rest.drains { drain.submit() }
        }
    }
}

/// What a ``WriteBatch`` rarely holds. A class, so that a batch without it is cheap to destroy;
/// it never leaves the writing thread.
@usableFromInline
final class WriteBatchRest {
    /// Wrapped, so that the array holds each closure as it is: an array of bare closures stores
    /// them behind a reabstraction thunk, one allocation per observation per write.
    @usableFromInline var drains: [Drain] = []
    @usableFromInline var garbage: [any Sendable] = []
    /// The snapshots a transaction touched after the first, each once, in the order first touched.
    @usableFromInline var deferred: [DeferredSnapshot] = []

    @inlinable
    init() {}
}

/// A drain to submit once a write's lock is released.
@usableFromInline
struct Drain {
    @usableFromInline let submit: @Sendable () -> Void

    @inlinable
    init(submit: @escaping @Sendable () -> Void) {
        self.submit = submit
    }
}

/// A snapshot observation a transaction touched: recorded once its writes are applied.
@usableFromInline
struct DeferredSnapshot {
    @usableFromInline let trigger: AnyObject
    /// Records the snapshot (`trigger`) as a change of the model. Captures nothing: formed where
    /// the trigger's types are known, so that recording is specialised without a closure
    /// context to allocate. (Through a protocol, the witness would run the generic code,
    /// unspecialised, on every update: the "update { 2 properties }" row.)
    @usableFromInline let record:
        (_ trigger: AnyObject, _ model: AnyObject, _ batch: inout WriteBatch, _ lock: borrowing ModelLock) -> Void

    @inlinable
    init(
        trigger: AnyObject,
        record: @escaping (AnyObject, AnyObject, inout WriteBatch, borrowing ModelLock) -> Void
    ) {
        self.trigger = trigger
        self.record = record
    }
}
