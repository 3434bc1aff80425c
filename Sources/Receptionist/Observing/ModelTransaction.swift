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
    /// The properties this update read or wrote, in the order it first touched them.
    /// `@exclusivity(unchecked)`: used by one thread, the one running the update.
    @usableFromInline @exclusivity(unchecked) var entries = TransactionEntries()
    /// Set when the closure returned and the commit began (see ``checkNotSpent()``).
    @usableFromInline @exclusivity(unchecked) var isSpent = false

    @usableFromInline
    init(_ model: Model) {
        self.model = model
        writer = currentThreadIdentity()
    }

    deinit {
        entries.end()
    }

    /// The property at `keyPath`: as this update wrote it, or else the model's current value.
    @inlinable
    public subscript<Value: Sendable>(dynamicMember keyPath: ReferenceWritableKeyPath<Model, Value>) -> Value {
        get {
            checkNotSpent()
            let index = entryIndex(for: keyPath)
            let registry = model.registry
            return entries.withBuffer { entries in
                if entries[index].apply != nil {
                    return WrittenValue<Value>.load(entries.baseAddress.unsafelyUnwrapped + index)
                }
                let storage = unsafeDowncast(entries[index].storage.unsafelyUnwrapped, to: PropertyStorage<Value>.self)
                let (value, version) = registry.state.withLock { _ in (storage.value, storage.version) }
                if entries[index].readVersion == nil { entries[index].readVersion = version }
                return value
            }
        }
        set {
            checkNotSpent()
            let index = entryIndex(for: keyPath)
            let isFirstWrite = entries.withBuffer { entries in
                let entry = entries.baseAddress.unsafelyUnwrapped + index
                let isFirst = entry.pointee.apply == nil
                WrittenValue.store(newValue, in: entry, replacing: !isFirst)
                guard isFirst else { return false }
                // Formed here, where `Value` is known: applying the write is specialised, and
                // the closures capture nothing (no context to allocate).
                entry.pointee.apply = { storage, entry, writer, model, batch in
                    WrittenValue<Value>.apply(entry, to: storage, writer: writer, model: model, into: &batch)
                }
                entry.pointee.destroy = { entry in WrittenValue<Value>.destroy(entry) }
                return true
            }
            if isFirstWrite { entries.recordFirstWrite(at: index) }
        }
    }

    /// The index of the entry of the property at `keyPath`, added if this update did not touch
    /// the property yet.
    @inlinable
    func entryIndex<Value: Sendable>(for keyPath: ReferenceWritableKeyPath<Model, Value>) -> Int {
        if let index = entries.firstIndex(of: keyPath) { return index }
        let storage = model.observedStorage(for: keyPath, in: "update(_:)", parameter: "a transaction's key path")
        // An equal key path that is another object names the same property: one entry for both.
        if let index = entries.firstIndex(of: storage) { return index }
        entries.append(TransactionEntry(keyPath: keyPath, storage: storage))
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
    @inlinable
    func checkNotSpent() {
        precondition(
            !isSpent,
            "Receptionist: a ModelTransaction was used after its update(_:) closure returned; use it only inside "
                + "the closure")
    }
}

/// Applies a transaction's writes (`entries`) to `model`, if every property it read still has
/// the value that was read. Not generic, so that it runs specialised.
///
/// A written property that Observation may be tracking and was not told of (it is not in
/// `notified`) makes the attempt stop before it writes anything: its `willSet` runs outside the
/// lock, it joins `notified`, and the commit is tried again.
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
        guard entries.hasReads() else { return true }
        let conflict = registry.state.withLock { _ in entries.conflict(writer: writer) }
        precondition(conflict != .selfInflicted, directWriteMessage)
        return conflict == nil
    }
    var notifiedJustNow = false
    while true {
        var batch = WriteBatch()
        let alreadyNotified = notified
        let outcome = registry.state.withLockThenRelease { _ -> (CommitOutcome, released: [any Sendable]?) in
            if let conflict = entries.conflict(writer: writer) { return (.conflict(conflict), released: nil) }
            let unnotified = entries.unnotified(alreadyNotified)
            if !unnotified.isEmpty { return (.notifyFirst(unnotified), released: nil) }
            batch.defersSnapshots = true
            // Each entry keeps the value its write replaced: released with the transaction,
            // after the lock.
            entries.applyWrites(writer: writer, model: model, into: &batch)
            batch.recordDeferredSnapshots(model: model)
            return (.committed, released: batch.takeGarbage())
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
            preconditionFailure(directWriteMessage)
        }
    }
}

private var directWriteMessage: String {
    "Receptionist: update(_:) body wrote the model directly; that update could never commit. "
        + "Write the model's properties through the transaction the closure is given."
}

/// One property a transaction touched.
@usableFromInline
struct TransactionEntry {
    /// Stores the entry's written value in the storage as a write by `writer`, handing the
    /// change to its observers, and leaves the value replaced in the entry. Called under the
    /// model's lock. See ``WrittenValue``.
    @usableFromInline
    typealias Apply = (
        _ storage: AnyPropertyStorage, _ entry: UnsafeMutablePointer<TransactionEntry>, _ writer: UInt,
        _ model: AnyObject, _ batch: inout WriteBatch
    ) -> Void
    /// Deinitialises the value the entry holds in ``bytes``, if it holds one there.
    @usableFromInline
    typealias Destroy = (_ entry: UnsafeMutablePointer<TransactionEntry>) -> Void

    /// The key path the transaction first named it by (compared by identity: a key path literal
    /// is one object per call site); retained by ``TransactionEntries/append(_:)`` and released
    /// with the transaction, so that its address cannot be reused meanwhile. `nil` in a vacant
    /// inline slot.
    @usableFromInline var keyPath: Unmanaged<AnyKeyPath>?
    /// Kept alive by the model, which the transaction holds; `nil` in a vacant inline slot.
    @usableFromInline unowned(unsafe) var storage: AnyPropertyStorage?
    /// The value the transaction wrote, if it wrote one and it fits (see ``WrittenValue``); once
    /// the write is applied, the value it replaced (destroyed with the transaction, after the
    /// lock). Raw bytes: owned by the entry, deinitialised only through ``destroy``.
    @usableFromInline var bytes: (UInt, UInt, UInt, UInt) = (0, 0, 0, 0)
    /// The same, for a value that does not fit in ``bytes``.
    @usableFromInline var boxed: Any?
    /// How to apply the write; set by the first write (so: whether the entry was written).
    @usableFromInline var apply: Apply?
    /// How to deinitialise the value in ``bytes``; set by the first write.
    @usableFromInline var destroy: Destroy?
    /// The version read from the model, if the transaction read the model's value.
    @usableFromInline var readVersion: UInt64?
    /// Where its first write falls among the transaction's writes: they are applied in that order.
    @usableFromInline var writeOrder = 0

    /// A vacant inline slot.
    @inlinable
    init() {}

    @inlinable
    init(keyPath: AnyKeyPath, storage: AnyPropertyStorage) {
        self.keyPath = .passRetained(keyPath)
        self.storage = storage
    }
}

/// The entries of a transaction: up to three inline, so that a transaction of up to three
/// properties allocates nothing but itself; beyond that, all of them in an array. Searched
/// linearly: an update touches a handful of properties. Reached in place through
/// ``withBuffer(_:)``, so that an entry (which may own a written value in its bytes) is never
/// copied, only moved.
///
/// Not reentrant: a deinit that a second write to a property runs (of the value it replaces)
/// must not use the same transaction, whose entries are lent out while it runs.
@usableFromInline
struct TransactionEntries {
    @usableFromInline var inline = (TransactionEntry(), TransactionEntry(), TransactionEntry())
    /// Every entry, once there are more than three.
    @usableFromInline var spilled: [TransactionEntry] = []
    @usableFromInline var count = 0
    /// How many of the entries were written.
    @usableFromInline var writes = 0

    @inlinable
    init() {}

    /// Runs `body` with the entries in place.
    @inlinable
    mutating func withBuffer<Result>(_ body: (UnsafeMutableBufferPointer<TransactionEntry>) throws -> Result)
        rethrows -> Result
    {
        let count = self.count
        guard count <= 3 else {
            return try spilled.withUnsafeMutableBufferPointer { try body(.init(rebasing: $0[..<count])) }
        }
        // A homogeneous tuple is laid out as an array of its element type.
        return try withUnsafeMutablePointer(to: &inline) { tuple in
            try tuple.withMemoryRebound(to: TransactionEntry.self, capacity: 3) { first in
                try body(UnsafeMutableBufferPointer(start: first, count: count))
            }
        }
    }

    /// Adds `entry` (which retained its key path).
    @inlinable
    mutating func append(_ entry: TransactionEntry) {
        switch count {
        case 0: inline.0 = entry
        case 1: inline.1 = entry
        case 2: inline.2 = entry
        case 3:
            spilled = [inline.0, inline.1, inline.2, entry]
            inline = (TransactionEntry(), TransactionEntry(), TransactionEntry())
        default: spilled.append(entry)
        }
        count += 1
    }

    /// Destroys the written (or, once applied, replaced) values the entries hold and releases
    /// the key paths they retained; the transaction is ending.
    mutating func end() {
        withBuffer { entries in
            for index in entries.indices {
                entries[index].destroy?(entries.baseAddress.unsafelyUnwrapped + index)
                entries[index].keyPath?.release()
            }
        }
    }

    /// The entry first named by this very key path object.
    @inlinable
    mutating func firstIndex(of keyPath: AnyKeyPath) -> Int? {
        withBuffer { entries in entries.firstIndex { $0.keyPath?.takeUnretainedValue() === keyPath } }
    }

    /// The entry of `storage`.
    @inlinable
    mutating func firstIndex(of storage: AnyPropertyStorage) -> Int? {
        withBuffer { entries in entries.firstIndex { $0.storage === storage } }
    }

    /// The entry at `index` was just written for the first time.
    @usableFromInline
    mutating func recordFirstWrite(at index: Int) {
        let order = writes
        withBuffer { $0[index].writeOrder = order }
        writes += 1
    }

    var hasWrites: Bool { writes > 0 }

    mutating func hasReads() -> Bool {
        withBuffer { entries in entries.contains { $0.readVersion != nil } }
    }

    /// Under the model's lock: why the transaction cannot commit, if a property it read changed.
    mutating func conflict(writer: UInt) -> Conflict? {
        withBuffer { entries in
            for index in entries.indices {
                guard let readVersion = entries[index].readVersion else { continue }
                let storage = entries[index].storage.unsafelyUnwrapped
                guard storage.version != readVersion else { continue }
                return storage.lastWriter == writer ? .selfInflicted : .concurrentWrite
            }
            return nil
        }
    }

    /// Under the model's lock: the notifiers of the written properties that are not in
    /// `notified`, in the order of the entries.
    mutating func unnotified(_ notified: [any ObservationNotifier]) -> [any ObservationNotifier] {
        withBuffer { entries in
            var unnotified: [any ObservationNotifier] = []
            for index in entries.indices where entries[index].apply != nil {
                guard let notifier = entries[index].storage.unsafelyUnwrapped.observationNotifier else { continue }
                if !notified.contains(where: { $0 === notifier }) { unnotified.append(notifier) }
            }
            return unnotified
        }
    }

    /// Under the model's lock: applies every write, in the order of the first writes; each entry
    /// then holds the value its write replaced.
    mutating func applyWrites(writer: UInt, model: AnyObject, into batch: inout WriteBatch) {
        withBuffer { entries in
            // Usually the entries are in that order already (nothing was read before it was
            // written): then no array of indices is made.
            var inOrder = true
            var next = 0
            for index in entries.indices where entries[index].apply != nil {
                if entries[index].writeOrder != next { inOrder = false }
                next += 1
            }
            func apply(_ index: Int) {
                guard let apply = entries[index].apply else { return }
                apply(
                    entries[index].storage.unsafelyUnwrapped, entries.baseAddress.unsafelyUnwrapped + index, writer,
                    model, &batch)
            }
            if inOrder {
                for index in entries.indices { apply(index) }
            } else {
                for index in entries.indices.sorted(by: { entries[$0].writeOrder < entries[$1].writeOrder }) {
                    apply(index)
                }
            }
        }
    }
}

/// How a transaction keeps a written value of type `Value` in its entry: in the entry's
/// ``TransactionEntry/bytes`` when it fits (every value up to four words: no existential box to
/// make, no dynamic cast to read it back), or else in ``TransactionEntry/boxed``.
///
/// The bytes are raw storage the entry owns: ``store(_:in:replacing:)`` initialises them (or
/// assigns, on a second write), ``apply(_:to:writer:model:into:)`` swaps the value with the
/// property's, leaving the replaced value there, and ``destroy(_:)`` deinitialises whatever is
/// there once the transaction ends. An entry is never copied while it holds a value (the
/// entries are reached in place; moving them into the spill array is a move).
@usableFromInline
enum WrittenValue<Value: Sendable> {
    @inlinable
    static var fits: Bool {
        // Bitwise takable too: entries are moved by copying their bytes (into the spill array,
        // as it grows), which a value the runtime tracks by address (an Objective-C weak
        // reference, a C++ type with its own move) does not survive.
        MemoryLayout<Value>.size <= MemoryLayout<(UInt, UInt, UInt, UInt)>.size
            && MemoryLayout<Value>.alignment <= MemoryLayout<UInt>.alignment && _isBitwiseTakable(Value.self)
    }

    @inlinable
    static func slot(_ entry: UnsafeMutablePointer<TransactionEntry>) -> UnsafeMutablePointer<Value> {
        UnsafeMutableRawPointer(entry).advanced(
            by: MemoryLayout<TransactionEntry>.offset(of: \.bytes).unsafelyUnwrapped
        )
        .assumingMemoryBound(to: Value.self)
    }

    @inlinable
    static func store(_ value: Value, in entry: UnsafeMutablePointer<TransactionEntry>, replacing: Bool) {
        guard fits else {
            entry.pointee.boxed = value
            return
        }
        if replacing {
            slot(entry).pointee = value
        } else {
            UnsafeMutableRawPointer(slot(entry)).initializeMemory(as: Value.self, to: value)
        }
    }

    @inlinable
    static func load(_ entry: UnsafeMutablePointer<TransactionEntry>) -> Value {
        fits ? slot(entry).pointee : entry.pointee.boxed as! Value
    }

    @inlinable
    static func apply(
        _ entry: UnsafeMutablePointer<TransactionEntry>,
        to storage: AnyPropertyStorage,
        writer: UInt,
        model: AnyObject,
        into batch: inout WriteBatch
    ) {
        let storage = unsafeDowncast(storage, to: PropertyStorage<Value>.self)
        if fits {
            let slot = slot(entry)
            slot.initialize(to: storage.replace(with: slot.move(), writer: writer, model: model, into: &batch))
        } else {
            let written = entry.pointee.boxed as! Value
            entry.pointee.boxed = storage.replace(with: written, writer: writer, model: model, into: &batch)
        }
    }

    @inlinable
    static func destroy(_ entry: UnsafeMutablePointer<TransactionEntry>) {
        if fits { slot(entry).deinitialize(count: 1) }
    }
}

/// How an attempt to commit a transaction ended.
private enum CommitOutcome {
    case committed
    /// Observation may be tracking these written properties and was not told yet.
    case notifyFirst([any ObservationNotifier])
    case conflict(Conflict)
}

/// Why a transaction cannot commit.
enum Conflict: Equatable {
    /// Another thread wrote a property the transaction read: run it again.
    case concurrentWrite
    /// The transaction's own thread wrote it, from inside the closure: it would never commit.
    case selfInflicted
}
