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
/// naming it). Use it only inside the closure, on the thread that runs it.
@dynamicMemberLookup
public final class ModelTransaction<Model: ObservableModelProtocol> {
    private let model: Model
    private let writer = currentThreadIdentity()
    /// The writes, in the order they were first made, by storage.
    private var writes: [ObjectIdentifier: PendingWrite] = [:]
    /// The written storages, in the order they were first written.
    private var order: [AnyPropertyStorage] = []
    /// For each storage read from the model: whether it still has the version that was read.
    private var reads: [ObjectIdentifier: ReadCheck] = [:]
    private var storages: [AnyKeyPath: AnyObject] = [:]

    init(_ model: Model) {
        self.model = model
    }

    /// The property at `keyPath`: as this update wrote it, or else the model's current value.
    public subscript<Value: Sendable>(dynamicMember keyPath: ReferenceWritableKeyPath<Model, Value>) -> Value {
        get {
            let storage = self.storage(keyPath)
            let identity = ObjectIdentifier(storage)
            if let write = writes[identity] { return write.value as! Value }
            let (value, version) = model.registry.state.withLock { _ in (storage.value, storage.version) }
            if reads[identity] == nil { reads[identity] = ReadCheck(storage: storage, version: version) }
            return value
        }
        set {
            let storage = self.storage(keyPath)
            let identity = ObjectIdentifier(storage)
            if writes[identity] == nil { order.append(storage) }
            writes[identity] = PendingWrite(storage: storage, value: newValue, writer: writer)
        }
    }

    /// Applies the writes, if every property read still has the value that was read.
    ///
    /// A written property that Observation may be tracking and was not told of (it is not in
    /// `notified`) makes the attempt stop before it writes anything: its `willSet` runs outside
    /// the lock, it joins `notified`, and the commit is tried again.
    ///
    /// - Returns: `false` if one changed meanwhile (the update runs again).
    func commit(notified: inout [any ObservationNotifier]) -> Bool {
        guard !writes.isEmpty else { return reads.isEmpty || validated() }
        let (writes, order, reads, writer) = (self.writes, self.order, Array(self.reads.values), self.writer)
        let model = self.model
        var notifiedJustNow = false
        while true {
            var batch = WriteBatch()
            let alreadyNotified = notified
            let outcome = model.registry.state.withLockThenRelease {
                _ -> (CommitOutcome, released: [any Sendable]?) in
                if let conflict = reads.lazy.compactMap({ $0.conflict(writer: writer) }).first {
                    return (.conflict(conflict), released: nil)
                }
                let unnotified = unnotifiedObservation(of: order, alreadyNotified)
                if !unnotified.isEmpty { return (.notifyFirst(unnotified), released: nil) }
                batch.defersSnapshots = true
                let old = order.map { writes[ObjectIdentifier($0)]!.apply(model, &batch) }
                batch.recordDeferredSnapshots()
                let garbage: [any Sendable] = batch.takeGarbage() ?? []
                return (.committed, released: old + garbage)
            }
            batch.submitDrains()
            switch outcome {
            case .committed:
                return true
            case .notifyFirst(let notifiers):
                notified += notifiers
                notifiedJustNow = true
                assertNoLockHeld("telling Observation of a transaction's writes")
                for notifier in notifiers { notifier.willSet(model) }
            case .conflict(.concurrentWrite):
                return false
            case .conflict(.selfInflicted):
                // Right after willSet, the write came from an Observation handler, not from `body`.
                if notifiedJustNow { return false }
                preconditionFailure(Self.directWriteMessage)
            }
        }
    }

    /// Whether every property read still has the version that was read (an update that only read).
    private func validated() -> Bool {
        let (reads, writer) = (Array(self.reads.values), self.writer)
        let conflict = model.registry.state.withLock { _ in reads.lazy.compactMap { $0.conflict(writer: writer) }.first
        }
        precondition(conflict != .selfInflicted, Self.directWriteMessage)
        return conflict == nil
    }

    private static var directWriteMessage: String {
        "Receptionist: update(_:) body wrote the model directly; that update could never commit. "
            + "Write the model's properties through the transaction the closure is given."
    }

    /// The storage of the `@Observed` property at `keyPath`.
    private func storage<Value: Sendable>(_ keyPath: ReferenceWritableKeyPath<Model, Value>) -> PropertyStorage<Value> {
        if let known = storages[keyPath] as? PropertyStorage<Value> { return known }
        let storage = model.observedStorage(for: keyPath, in: "update(_:)", parameter: "a transaction's key path")
        storages[keyPath] = storage
        return storage
    }
}

/// Under the model's lock: the notifiers of the written properties (`written`) that are not in
/// `notified`, in the order of the writes. Not generic, so that it runs specialised.
private func unnotifiedObservation(
    of written: [AnyPropertyStorage],
    _ notified: [any ObservationNotifier]
) -> [any ObservationNotifier] {
    var unnotified: [any ObservationNotifier] = []
    for storage in written {
        guard let notifier = storage.observationNotifier else { continue }
        if !notified.contains(where: { $0 === notifier }) { unnotified.append(notifier) }
    }
    return unnotified
}

/// How an attempt to commit a transaction ended.
private enum CommitOutcome {
    case committed
    /// Observation may be tracking these written properties and was not told yet.
    case notifyFirst([any ObservationNotifier])
    case conflict(Conflict)
}

/// Why a transaction cannot commit.
private enum Conflict: Equatable {
    /// Another thread wrote a property the transaction read: run it again.
    case concurrentWrite
    /// The transaction's own thread wrote it, from inside the closure: it would never commit.
    case selfInflicted
}

/// A property a transaction read, and the version it read.
private struct ReadCheck {
    let version: UInt64
    let currentVersion: () -> UInt64
    let lastWriter: () -> UInt

    init<Value>(storage: PropertyStorage<Value>, version: UInt64) {
        self.version = version
        currentVersion = { storage.version }
        lastWriter = { storage.lastWriter }
    }

    /// Under the model's lock: `nil` if the property still has the version read.
    func conflict(writer: UInt) -> Conflict? {
        guard currentVersion() != version else { return nil }
        return lastWriter() == writer ? .selfInflicted : .concurrentWrite
    }
}

/// A write a transaction will apply.
private struct PendingWrite {
    /// The value, for reads later in the same transaction.
    let value: Any
    /// Stores the value and hands the change to the property's observations; under the model's
    /// lock. Returns the old value, to release after the lock.
    let apply: (AnyObject, inout WriteBatch) -> any Sendable

    init<Value: Sendable>(storage: PropertyStorage<Value>, value: Value, writer: UInt) {
        self.value = value
        apply = { model, batch in
            storage.replace(with: value, writer: writer, model: model, into: &batch)
        }
    }
}
