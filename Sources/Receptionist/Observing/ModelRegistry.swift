/// The lock of one model — an ``ObservableModel`` or a standalone ``ObservableValue`` — and the
/// bookkeeping of its observations.
///
/// One lock per model guards the values of all the model's observed properties
/// (``PropertyStorage``), the buffers of all their observations (``SharedMachine``) and the list
/// of observations. So a write takes one lock to store the value and to append the change for
/// every observation; a transaction writes several properties atomically; a snapshot reads
/// several properties consistently; and every observation sees the writes in the order they were
/// applied.
///
/// Decide under the lock, act outside it: what a write decides to do afterwards (submit drains,
/// release values) is collected in a ``WriteBatch`` and done after the lock is released.
@usableFromInline
final class ModelRegistry: Sendable {
    @usableFromInline
    struct State {
        /// Every observation attached to the model, so that the model's deallocation ends them,
        /// in the order they attached. An array, not a dictionary by identity: removing one
        /// scans it, as removing its observer from the property's list does anyway, and a
        /// dictionary would cost every observed model 128 bytes.
        var observations: [any ModelObservation] = []
        /// The model was deallocated: nothing attaches any more.
        var isEnded = false
        /// The newest of the storages found so far (see ``KnownStorage``): holds the list.
        var knownStorages: KnownStorage?
        /// How many the list holds.
        var knownCount = 0
        /// The model's `ObservationRegistrar`, boxed (the type is not available on every OS the
        /// library supports); made by the first read of a property through its getter.
        var observationRegistrar: (any AnyObject & Sendable)?

        @usableFromInline
        init() {}
    }

    @usableFromInline
    let state = Locked(State())
    /// The address of `state.knownStorages`, unretained (0 while there is none), published with
    /// a release store so that lookups read the list without the lock.
    private let knownHead = AtomicValue<Int>(0)

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
        let notifier = state.withLockThenRelease {
            _ -> ((any ObservationNotifier)?, released: (Value, [any Sendable]?)?) in
            if let notifier = storage.observationNotifier { return (notifier, released: nil) }
            let old = storage.replace(with: newValue, writer: writer, model: model, into: &batch)
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
    /// section looks up tuple metadata at run time, which made each write about 5× slower.
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
        state.withLockThenRelease { _ in
            let old = storage.replace(with: newValue, writer: writer, model: model, into: &batch)
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
            let (current, version) = state.withLock { _ in (storage.value, storage.version) }
            var proposed = current
            assertNoLockHeld("running an update closure")
            let result = try body(&proposed)
            let committed = commitOptimistically(notified: &notified, model: model, misuse: Self.updateMisuse) {
                notified, batch in
                state.withLockThenRelease { _ -> (CommitAttempt, released: (Value, [any Sendable]?)?) in
                    guard storage.version == version else {
                        return (.conflict(selfInflicted: storage.lastWriter == writer), released: nil)
                    }
                    if notified.isEmpty, let notifier = storage.observationNotifier {
                        return (.notifyFirst([notifier]), released: nil)
                    }
                    let old = storage.replace(with: proposed, writer: writer, model: model, into: &batch)
                    return (.committed, released: (old, batch.takeGarbage()))
                }
            }
            if committed { return result }
        }
    }

    @usableFromInline
    static var updateMisuse: String {
        "Receptionist: update(_:) body wrote the value it is updating; that update could never commit. Compute "
            + "the new value in the closure; write it only through its argument."
    }

    /// Reads `storage`, and its notifier, for a getter: it tells Observation of the read.
    @inlinable
    func readForAccess<Value>(_ storage: PropertyStorage<Value>) -> (Value, (any ObservationNotifier)?) {
        state.withLock { _ in (storage.value, storage.observationNotifier) }
    }

    /// Reads `storage`.
    @inlinable
    func read<Value>(_ storage: PropertyStorage<Value>) -> Value {
        state.withLock { _ in storage.value }
    }

    /// The storage a lookup through this very key path object found, if any; without the lock.
    ///
    /// The list only grows while the model lives (the state holds its newest node, each node
    /// the next), and a node is published only once complete: a node read here stays valid for
    /// as long as the caller holds the model.
    func knownStorage(for keyPath: AnyKeyPath) -> (any AnyObject & Sendable)? {
        // Walked unretained: the nodes outlive the call (see above), and retaining each would
        // make every lookup write the nodes' reference counts.
        var address = UnsafeRawPointer(bitPattern: knownHead.load(ordering: .acquiring))
        while let current = address {
            let (found, next) = Unmanaged<KnownStorage>.fromOpaque(current)._withUnsafeGuaranteedRef { node in
                node.keyPath === keyPath
                    ? (node.storage as (any AnyObject & Sendable)?, nil)
                    : (nil, node.nextAddress)
            }
            if let found { return found }
            address = next
        }
        return nil
    }

    /// Under the lock: the storage a key path equal to `keyPath` (another object) found, if any;
    /// records it for `keyPath` too, up to ``KnownStorage/limit`` key path objects.
    func equalKnownStorage(for keyPath: SendableKeyPath, in state: inout State) -> (any AnyObject & Sendable)? {
        let keyPath = keyPath.keyPath
        var node = state.knownStorages
        while let current = node {
            if current.keyPath == keyPath {
                if state.knownCount < KnownStorage.limit {
                    record(current.storage, for: SendableKeyPath(keyPath: keyPath), in: &state)
                }
                return current.storage
            }
            node = current.next
        }
        return nil
    }

    /// Under the lock: records that `keyPath` names `storage`, unless this key path object is
    /// known already (another thread found it meanwhile).
    func record(_ storage: any AnyObject & Sendable, for keyPath: SendableKeyPath, in state: inout State) {
        let keyPath = keyPath.keyPath
        var node = state.knownStorages
        while let current = node {
            if current.keyPath === keyPath { return }
            node = current.next
        }
        let newest = KnownStorage(keyPath: keyPath, storage: storage, next: state.knownStorages)
        state.knownStorages = newest
        state.knownCount += 1
        knownHead.store(Int(bitPattern: Unmanaged.passUnretained(newest).toOpaque()), ordering: .releasing)
    }

    /// The model is being deallocated: every observation ends (delivers what is pending, which
    /// is nothing, since pending changes keep the model alive, and releases its task block).
    ///
    /// The list of known storages goes too: an observation keeps this registry (its lock) for as
    /// long as its token lives, and the list would keep every storage, with the value it holds,
    /// alive with it. Nobody walks the list any more: a lookup needs the model, and this runs in
    /// the model's `deinit`.
    func modelDidEnd() {
        let observations = state.withLockThenRelease { state in
            state.isEnded = true
            knownHead.store(0, ordering: .releasing)
            let known = state.knownStorages.take()
            state.knownCount = 0
            defer { state.observations = [] }
            return (state.observations, released: known)
        }
        for observation in observations {
            observation.modelDidEnd()
        }
    }
}

/// What an observation does when its model is deallocated.
protocol ModelObservation: AnyObject, Sendable {
    func modelDidEnd()
}

/// What a write under a model's lock leaves to do once the lock is released: drains to submit
/// and values to release. Nothing is allocated unless there is more than one drain or
/// something to release.
@usableFromInline
struct WriteBatch {
    @usableFromInline var firstDrain: (@Sendable () -> Void)?
    /// Wrapped, so that the array holds each closure as it is: an array of bare closures stores
    /// them behind a reabstraction thunk, one allocation per observation per write.
    @usableFromInline var moreDrains: [Drain]?
    @usableFromInline var garbage: [any Sendable]?
    /// In a transaction: snapshots record once all its writes are applied, not once per write.
    @usableFromInline var defersSnapshots = false
    /// The snapshots a transaction touched, each once, in the order first touched.
    @usableFromInline var firstDeferred: DeferredSnapshot?
    @usableFromInline var moreDeferred: [DeferredSnapshot]?

    @inlinable
    init() {}

    /// Records `snapshot` once the transaction's writes are applied. The snapshot defers itself
    /// once per transaction (it keeps a mark, under the lock).
    @inlinable
    mutating func deferSnapshot(_ snapshot: DeferredSnapshot) {
        if firstDeferred == nil {
            firstDeferred = snapshot
        } else {
            var more = moreDeferred.take() ?? []
            more.append(snapshot)
            moreDeferred = more
        }
    }

    /// Records the snapshots the transaction touched, as changes of `model`.
    mutating func recordDeferredSnapshots(model: AnyObject) {
        defersSnapshots = false
        if let first = firstDeferred.take() { first.record(first.trigger, model, &self) }
        if let more = moreDeferred.take() {
            for snapshot in more { snapshot.record(snapshot.trigger, model, &self) }
        }
    }

    /// `submitDrain` must run after the lock is released.
    @inlinable
    mutating func submitAfterwards(_ submitDrain: @escaping @Sendable () -> Void) {
        if firstDrain == nil {
            firstDrain = submitDrain
        } else {
            // Appended in place: `(moreDrains ?? []) + [submitDrain]` copied the array on every
            // append, which made a write to a property with k observations cost O(k²).
            var drains = moreDrains.take() ?? []
            drains.append(Drain(submit: submitDrain))
            moreDrains = drains
        }
    }

    /// `value` must be released after the lock is released.
    @inlinable
    mutating func release<Value: Sendable>(_ value: Value) {
        var released = garbage.take() ?? []
        released.append(value)
        garbage = released
    }

    /// Takes what must be released after the lock.
    @inlinable
    mutating func takeGarbage() -> [any Sendable]? {
        garbage.take()
    }

    @inlinable
    func submitDrains() {
        firstDrain?()
        if let moreDrains {
            for drain in moreDrains { drain.submit() }
        }
    }
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
    /// context to allocate.
    @usableFromInline let record: (_ trigger: AnyObject, _ model: AnyObject, _ batch: inout WriteBatch) -> Void

    @inlinable
    init(trigger: AnyObject, record: @escaping (AnyObject, AnyObject, inout WriteBatch) -> Void) {
        self.trigger = trigger
        self.record = record
    }
}

/// A key path handed to the model's lock. `@unchecked Sendable`: see ``KnownStorage``.
struct SendableKeyPath: @unchecked Sendable {
    let keyPath: AnyKeyPath
}

/// The storage of an `@Observed` property, and a key path object that names it: one node of a
/// model's list of the storages found so far, newest first.
///
/// Storages are looked up by the identity of the key path object, which costs a pointer
/// comparison instead of hashing the key path's components (a key path literal is one object per
/// call site, made once), and without the model's lock (see
/// ``ModelRegistry/knownStorage(for:)``): a transaction looks up each property it touches. The
/// node retains the key path, so that its identity is not reused by another object while the
/// model lives. A key path that is equal to a known one but another object is found by
/// comparison, under the lock, and recorded too, up to a bound (so that key paths made anew for
/// every lookup do not grow the list).
///
/// `@unchecked Sendable`: every field is a `let`. A key path is immutable, so comparing it from
/// several threads is safe; key paths are not `Sendable` only because one may capture a
/// non-`Sendable` subscript argument, which these (`@Observed` properties) never do, and which
/// is never used here but to compare.
final class KnownStorage: @unchecked Sendable {
    let keyPath: AnyKeyPath
    let storage: any AnyObject & Sendable
    let next: KnownStorage?
    /// The address of `next`, for the lookup's unretained walk.
    let nextAddress: UnsafeRawPointer?

    init(keyPath: AnyKeyPath, storage: any AnyObject & Sendable, next: KnownStorage?) {
        self.keyPath = keyPath
        self.storage = storage
        self.next = next
        nextAddress = next.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) }
    }

    /// How many key path objects a model records (beyond that, equal ones are compared).
    static let limit = 64
}
