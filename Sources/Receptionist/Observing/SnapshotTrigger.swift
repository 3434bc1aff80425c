/// The part of a snapshot observation that the watched properties' writes reach: it reads every
/// property of the snapshot and records a change from the last snapshot to that one.
///
/// Guarded by the model's lock, like the storages it reads: its fields are reached only with the
/// proof that the lock is held (``ModelLock``).
@usableFromInline
// Unsafe: the fields are reached only with a ModelLock (test: SnapshotStressTests)
final class SnapshotTrigger<Object: AnyObject & Sendable, Value: Sendable>: @unchecked Sendable {
    // @unchecked: the fields are reached only with a ModelLock, under the model's lock.

    /// Reads every property of the snapshot.
    @usableFromInline let read: @Sendable (borrowing ModelLock) -> Value
    @usableFromInline let observation: ObservationEngine<Object, Value>
    @usableFromInline let wantsOld: Bool

    /// The fields the model's lock guards; only the methods below touch them.
    @usableFromInline
    struct Fields {
        /// The snapshot the last change ended on (kept with `.old`, for the next change's old
        /// value).
        @usableFromInline var last: Value?
        /// The transaction being applied has deferred this snapshot already (see
        /// ``changed(model:batch:_:)``).
        @usableFromInline var isDeferred = false
        /// The model whose lock guards these fields (debug builds).
        @usableFromInline var binding = ModelLockBinding()

        @inlinable
        init() {}
    }

    // Unsafe: the model's lock, not the class, guards it (the methods take its proof); the dynamic check costs every write (row: "snapshot of 2 @Observed")
    @usableFromInline @exclusivity(unchecked)
    var fields = Fields()

    @usableFromInline
    init(
        read: @escaping @Sendable (borrowing ModelLock) -> Value, observation: ObservationEngine<Object, Value>,
        options: ObservationOptions
    ) {
        self.read = read
        self.observation = observation
        self.wantsOld = options.contains(.old)
    }

    /// The observer to register on one of the snapshot's properties.
    @inlinable
    func observer<Watched>() -> ValueObserver<Watched> {
        ValueObserver { [self] _, _, model, batch, lock in changed(model: model, batch: &batch, lock) }
    }

    /// A property of the snapshot was written. In a transaction, the change is recorded once,
    /// after all its writes.
    @inlinable
    func changed(model: AnyObject, batch: inout WriteBatch, _ lock: borrowing ModelLock) {
        lock.check(&fields.binding)
        guard batch.defersSnapshots else {
            record(model: model, batch: &batch, lock)
            return
        }
        guard !fields.isDeferred else { return }
        fields.isDeferred = true
        batch.deferSnapshot(
            DeferredSnapshot(trigger: self) { trigger, model, batch, lock in
                // Unsafe: `trigger` is this snapshot (self); a checked cast looks up the generic class's metadata (row: "update { 2 properties }")
                let trigger = unsafeDowncast(trigger, to: SnapshotTrigger.self)
                lock.check(&trigger.fields.binding)
                trigger.fields.isDeferred = false
                trigger.record(model: model, batch: &batch, lock)
            })
    }

    /// Starts the chain from the current snapshot; with `initial`, records it as the initial
    /// value. Called when the observation starts.
    @usableFromInline
    func begin(initial: Bool, model: AnyObject, batch: inout WriteBatch, _ lock: borrowing ModelLock) {
        lock.check(&fields.binding)
        let current = read(lock)
        if wantsOld { fields.last = current }
        guard initial else { return }
        observation.append(
            ChangeRecord(old: nil, new: current, isInitial: true), model: model, batch: &batch, lock)
    }

    @inlinable
    func record(model: AnyObject, batch: inout WriteBatch, _ lock: borrowing ModelLock) {
        lock.check(&fields.binding)
        let new = read(lock)
        let old = wantsOld ? fields.last.take() : nil
        if wantsOld { fields.last = new }
        observation.append(ChangeRecord(old: old, new: new), model: model, batch: &batch, lock)
    }
}
