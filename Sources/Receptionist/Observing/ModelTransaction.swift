extension ObservableModelProtocol {
    /// Writes several `@Observed` properties as one atomic change.
    ///
    /// ```swift
    /// download.update { download in
    ///     download.progress = 1
    ///     download.status = .done
    /// }
    /// ```
    ///
    /// `body` reads and writes the model's `@Observed` properties through the
    /// ``ModelTransaction`` it is given; the writes are applied together, under the model's lock,
    /// when `body` returns. Every observation of a written property gets one change for it (its
    /// old value is the value before the update); every snapshot observation that includes a
    /// written property gets one change, from the state before the update to the state after it.
    /// No observer ever sees some of the writes without the others.
    ///
    /// `body` runs outside the model's lock. If a property it read was written by another thread
    /// before the update applied, `body` runs again with the newer values (optimistic concurrency),
    /// so it should only compute the new values (no side effects); an update that reads a counter
    /// and writes it back never loses a concurrent increment. Writes to properties it did not
    /// read do not make it run again. If `body` throws, nothing is written.
    ///
    /// `body` must write the model only through the transaction: a property it read and then
    /// wrote directly could never be validated, and the program stops with a message saying so.
    ///
    /// Observation (see ``ObservableModel``, "SwiftUI and Observation") sees a `willSet` for each
    /// written property before the writes are applied, and a `didSet` for each once the update
    /// ends, each once however many times `body` ran; the `onChange` handlers of
    /// `withObservationTracking` run on this thread, before the writes are applied.
    ///
    /// - Returns: what `body` returned on the run whose writes were applied.
    @inlinable  // specialised for the model: the transaction's reads and writes are generic
    @discardableResult
    public func update<Result>(_ body: (ModelTransaction<Self>) throws -> Result) rethrows -> Result {
        // The properties Observation was told will change: each is owed a didSet, even if a
        // later run of `body` does not write it or throws (Observation expects them paired).
        var notified: [any ObservationNotifier] = []
        defer {
            for notifier in notified { notifier.didSet(self) }
        }
        while true {
            let transaction = ModelTransaction(self)
            assertNoLockHeld("running an update closure")
            let result = try body(transaction)
            if transaction.commit(notified: &notified) { return result }
        }
    }
}

/// The model as an ``ObservableModelProtocol/update(_:)`` closure sees it: reads and writes of its
/// `@Observed` properties, applied together when the closure returns.
///
/// Write `transaction.progress = 1` as you would write the model; read `transaction.progress`
/// to see the value this update wrote, or else the model's current value. Only `@Observed`
/// properties of the model can be reached (any other key path stops the program with a message
/// naming it). Use it only inside the closure, on the thread that runs it: used after the closure
/// returned, it stops the program with a message saying so.
@dynamicMemberLookup
public final class ModelTransaction<Model: ObservableModelProtocol> {
    @usableFromInline let model: Model
    @usableFromInline let writer: UInt
    /// The properties this update read or wrote, in the order it first touched them, and the
    /// values it wrote. `@exclusivity(unchecked)`: the container checks that it is not used
    /// while it is in use itself (``TransactionEntries/withEntries(_:)``), which the dynamic
    /// exclusivity check would also do, at several times the cost of a whole transaction.
    // Unsafe: TransactionEntries checks its own reentrancy; the dynamic check costs every access (row: "update { 2 properties }")
    @usableFromInline @exclusivity(unchecked) var entries = TransactionEntries()
    /// Set when the closure returned and the commit began (see ``checkNotSpent()``).
    /// `@exclusivity(unchecked)`: read and written by the thread running the update only.
    // Unsafe: one thread only; the dynamic check costs every read and write (row: "update { 2 properties }")
    @usableFromInline @exclusivity(unchecked) var isSpent = false

    @usableFromInline
    init(_ model: Model) {
        self.model = model
        writer = currentThreadIdentity()
    }

    deinit {
        entries.destroyValues()
    }

    /// The property at `keyPath`: as this update wrote it, or else the model's current value.
    @inlinable
    public subscript<Value: Sendable>(dynamicMember keyPath: ReferenceWritableKeyPath<Model, Value>) -> Value {
        get {
            checkNotSpent()
            let index = entryIndex(for: keyPath)
            if let written = entries.written(at: index, as: Value.self) { return written }
            let storage = entries.storage(at: index, as: Value.self)
            let (value, version) = model.registry.withLock { lock, _ in (storage.value(lock), storage.version(lock)) }
            entries.noteRead(version: version, at: index)
            return value
        }
        set {
            checkNotSpent()
            let index = entryIndex(for: keyPath)
            // What an earlier write of this update put there dies here, once the entries are no
            // longer in use: its deinitialiser may use this transaction.
            let replaced = entries.write(newValue, at: index)
            _ = consume replaced
        }
    }

    /// The index of the entry of the property at `keyPath`, added if this update did not touch
    /// the property yet.
    @inlinable
    func entryIndex<Value: Sendable>(for keyPath: ReferenceWritableKeyPath<Model, Value>) -> Int {
        // By storage, not by key path object: equal key paths that are other objects name the
        // same property, and an entry that held its key path (to compare its identity safely)
        // would retain and release it on every update.
        let storage = model.observedStorage(for: keyPath, in: "update(_:)", parameter: "a transaction's key path")
        if let index = entries.firstIndex(of: storage) { return index }
        entries.append(storage: storage)
        return entries.count - 1
    }

    /// Applies the writes, if every property read still has the value that was read.
    ///
    /// - Returns: `false` if one changed meanwhile (the update runs again).
    @usableFromInline
    func commit(notified: inout [any ObservationNotifier]) -> Bool {
        isSpent = true
        return commitTransaction(&entries, model: model, registry: model.registry, writer: writer, notified: &notified)
    }

    /// Stops the program if the transaction is used after its closure returned: once committed,
    /// its entries hold the values its writes replaced, not the model's.
    ///
    /// With the message in every build configuration (``invalidConfiguration(_:)``), out of line
    /// behind one branch, so that a transaction's every read and write pays only the branch.
    @inlinable
    func checkNotSpent() {
        if isSpent { invalidConfiguration(Self.spentMessage) }
    }

    @usableFromInline
    static var spentMessage: String {
        "a ModelTransaction was used after its update(_:) closure returned; use it only inside the closure"
    }
}

/// Applies a transaction's writes (`entries`) to `model`, if every property it read still has
/// the value that was read, by the library's one retry protocol
/// (``commitOptimistically(notified:model:misuse:attempt:)``). Not generic, so that it runs
/// specialised.
///
/// - Returns: `false` if a property read changed meanwhile (the update runs again).
private func commitTransaction(
    _ entries: inout TransactionEntries,
    model: AnyObject,
    registry: ModelRegistry,
    writer: UInt,
    notified: inout [any ObservationNotifier]
) -> Bool {
    guard entries.hasWrites else {
        guard entries.hasReads else { return true }
        let conflict = registry.withLock { lock, _ in entries.conflict(writer: writer, lock) }
        if conflict == .selfInflicted { invalidConfiguration(directWriteMessage) }
        return conflict == nil
    }
    return commitOptimistically(notified: &notified, model: model, misuse: directWriteMessage) { notified, batch in
        registry.withLockThenRelease { lock, _ -> (CommitAttempt, released: [any Sendable]?) in
            if let conflict = entries.conflict(writer: writer, lock) {
                return (.conflict(selfInflicted: conflict == .selfInflicted), released: nil)
            }
            let unnotified = entries.unnotified(notified, lock)
            if !unnotified.isEmpty { return (.notifyFirst(unnotified), released: nil) }
            batch.defersSnapshots = true
            // Each entry keeps the value its write replaced: released with the transaction,
            // after the lock.
            entries.applyWrites(writer: writer, model: model, into: &batch, lock)
            batch.recordDeferredSnapshots(model: model, lock)
            return (.committed, released: batch.takeGarbage())
        }
    }
}

private var directWriteMessage: String {
    "update(_:) body wrote the model directly; that update could never commit. "
        + "Write the model's properties through the transaction the closure is given."
}

/// Why a transaction cannot commit.
enum Conflict: Equatable {
    /// Another thread wrote a property the transaction read: run it again.
    case concurrentWrite
    /// The transaction's own thread wrote it, from inside the closure: it would never commit.
    case selfInflicted
}
