/// The part of a snapshot observation that the watched properties' writes reach: it reads every
/// property of the snapshot and records a change from the last snapshot to that one.
///
/// Guarded by the model's lock, like the storages it reads: `last` is accessed only under it
/// (hence `@unchecked Sendable`).
@usableFromInline
final class SnapshotTrigger<Object: AnyObject & Sendable, Value: Sendable>: @unchecked Sendable {
    /// Reads every property of the snapshot; called under the model's lock.
    @usableFromInline let read: @Sendable () -> Value
    @usableFromInline let observation: ObservationEngine<Object, Value>
    @usableFromInline let wantsOld: Bool
    /// The snapshot the last change ended on (kept with `.old`, for the next change's old value).
    @usableFromInline @exclusivity(unchecked)
    var last: Value?
    /// The transaction being applied has deferred this snapshot already (see
    /// ``changed(model:batch:)``).
    @usableFromInline @exclusivity(unchecked)
    var isDeferred = false

    @usableFromInline
    init(
        read: @escaping @Sendable () -> Value, observation: ObservationEngine<Object, Value>,
        options: ObservationOptions
    ) {
        self.read = read
        self.observation = observation
        self.wantsOld = options.contains(.old)
    }

    /// The observer to register on one of the snapshot's properties.
    @inlinable
    func observer<Watched>() -> ValueObserver<Watched> {
        ValueObserver { [self] _, _, model, batch in changed(model: model, batch: &batch) }
    }

    /// A property of the snapshot was written. In a transaction, the change is recorded once,
    /// after all its writes.
    @inlinable
    func changed(model: AnyObject, batch: inout WriteBatch) {
        guard batch.defersSnapshots else {
            record(model: model, batch: &batch)
            return
        }
        guard !isDeferred else { return }
        isDeferred = true
        batch.deferSnapshot(
            DeferredSnapshot(trigger: self) { trigger, model, batch in
                let trigger = unsafeDowncast(trigger, to: SnapshotTrigger.self)
                trigger.isDeferred = false
                trigger.record(model: model, batch: &batch)
            })
    }

    /// Starts the chain from the current snapshot; with `initial`, records it as the initial
    /// value. Called under the model's lock, when the observation starts.
    @usableFromInline
    func begin(initial: Bool, model: AnyObject, batch: inout WriteBatch) {
        let current = read()
        if wantsOld { last = current }
        guard initial else { return }
        observation.append(
            ChangeRecord(old: nil, new: current, isInitial: true), model: model, batch: &batch)
    }

    @inlinable
    func record(model: AnyObject, batch: inout WriteBatch) {
        let new = read()
        let old = wantsOld ? last.take() : nil
        if wantsOld { last = new }
        observation.append(ChangeRecord(old: old, new: new), model: model, batch: &batch)
    }
}
