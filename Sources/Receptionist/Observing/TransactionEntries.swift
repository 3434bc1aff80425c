/// The properties one transaction touched and the values it wrote: the one type that handles a
/// transaction's raw memory, as swift-collections' `Deque` keeps its buffer behind one
/// `_UnsafeHandle`. Nothing else reads or writes an entry's bytes.
///
/// ## Ownership
/// Noncopyable: the container is its transaction's, and the values its entries hold (the values
/// the transaction wrote; once they are applied, the values they replaced) are destroyed once,
/// by ``destroyValues()``, which the transaction's `deinit` calls. Entries never leave it: they
/// are reached in place (``withEntries(_:)``), and moved (into the spill array), never duplicated
/// while they hold a value.
///
/// ## No user code while the entries are lent
/// A value's deinitialiser is user code, and it may use the transaction (a value can hold it).
/// So no value is released while the entries are lent: a second write moves the value it
/// replaces out of its entry and hands it back to be released afterwards
/// (``write(_:at:)``), and applying the writes leaves each replaced value in its entry (that runs
/// under the model's lock anyway). Should anything reach the entries while they are lent all the
/// same (the transaction used from another thread at once), the program stops with a message
/// instead of reading or writing memory that is being changed.
///
/// ## Invariants
/// Checked after every change in debug builds (``checkInvariants()``):
/// - `count` entries: the first `count` of ``inline`` while `count <= 3` (the others vacant),
///   all of them in ``spilled`` beyond that;
/// - an entry was written exactly when its `apply` is set; it then has a `destroy`, and holds
///   its value in its bytes if the type fits (``WrittenValue/fits``), in `boxed` otherwise;
/// - the written entries' `writeOrder`s are `0..<writes`, each once.
@usableFromInline
struct TransactionEntries: ~Copyable {
    @usableFromInline var inline = (TransactionEntry(), TransactionEntry(), TransactionEntry())
    /// Every entry, once there are more than three.
    @usableFromInline var spilled: [TransactionEntry] = []
    @usableFromInline var count = 0
    /// How many of the entries were written.
    @usableFromInline var writes = 0
    /// Whether ``withEntries(_:)`` has lent the entries out.
    @usableFromInline var isLent = false

    @inlinable
    init() {}

    /// Destroys the values the entries hold and releases their key paths: what the transaction's
    /// `deinit` does, once (nothing can use the transaction any more). In place: copying the
    /// entries out first would retain and release what each holds.
    mutating func destroyValues() {
        withEntries { entries in
            for index in entries.indices {
                entries[index].destroy?(entries.baseAddress.unsafelyUnwrapped + index)
                entries[index].keyPath?.release()
            }
        }
    }

    /// Runs `body` with the entries in place. `body` must not run user code (see above).
    @inlinable
    mutating func withEntries<Result>(_ body: (UnsafeMutableBufferPointer<TransactionEntry>) throws -> Result)
        rethrows -> Result
    {
        precondition(!isLent, Self.reentrancyMessage)
        isLent = true
        defer { isLent = false }
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

    @usableFromInline
    static var reentrancyMessage: String {
        "Receptionist: a ModelTransaction was used while it was already in use (from another thread, or from a "
            + "deinitialiser the library should not have run there); use it only inside its update(_:) closure, "
            + "on the thread that runs it"
    }

    /// Adds `entry` (made by `TransactionEntry(keyPath:storage:)`, which retained its key path).
    ///
    /// Takes the entry made at the call site, and returns nothing: so small, it leaves the
    /// transaction's code small enough to be inlined where `update` is called, and the transaction
    /// itself on the stack (the benchmark's allocation counter: a wrapper that made the entry
    /// here cost an allocation per update in the "update { 2 properties }" row).
    @inlinable
    mutating func append(_ entry: TransactionEntry) {
        switch count {
        case 0: inline.0 = entry
        case 1: inline.1 = entry
        case 2: inline.2 = entry
        case 3:
            // Moved, not duplicated: the vacant slots left behind own nothing.
            spilled = [inline.0, inline.1, inline.2, entry]
            inline = (TransactionEntry(), TransactionEntry(), TransactionEntry())
        default: spilled.append(entry)
        }
        count += 1
        checkInvariants()
    }

    /// The entry first named by this very key path object.
    @inlinable
    mutating func firstIndex(of keyPath: AnyKeyPath) -> Int? {
        withEntries { entries in entries.firstIndex { $0.keyPath?.takeUnretainedValue() === keyPath } }
    }

    /// The entry of `storage`.
    @inlinable
    mutating func firstIndex(of storage: AnyPropertyStorage) -> Int? {
        withEntries { entries in entries.firstIndex { $0.storage === storage } }
    }

    /// The value the transaction wrote to the property of entry `index`, if it wrote one.
    @inlinable
    mutating func written<Value: Sendable>(at index: Int, as _: Value.Type) -> Value? {
        withEntries { entries in
            entries[index].apply == nil ? nil : WrittenValue<Value>.load(entries.baseAddress.unsafelyUnwrapped + index)
        }
    }

    /// The storage of entry `index`, whose values are `Value`s.
    @inlinable
    mutating func storage<Value: Sendable>(at index: Int, as _: Value.Type) -> PropertyStorage<Value> {
        // The entry was made for a `PropertyStorage<Value>` found through a key path to `Value`.
        withEntries { entries in
            unsafeDowncast(entries[index].storage.unsafelyUnwrapped, to: PropertyStorage<Value>.self)
        }
    }

    /// The transaction read `version` of the property of entry `index` (the first read counts).
    @inlinable
    mutating func noteRead(version: UInt64, at index: Int) {
        withEntries { entries in
            if entries[index].readVersion == nil { entries[index].readVersion = version }
        }
    }

    /// Writes `value` to entry `index`.
    ///
    /// - Returns: the value a previous write of this transaction put there, for the caller to
    ///   release now that the entries are no longer lent (its deinitialiser is user code).
    @inlinable
    mutating func write<Value: Sendable>(_ value: Value, at index: Int) -> Value? {
        let order = writes
        let (isFirst, replaced) = withEntries { entries -> (Bool, Value?) in
            let entry = entries.baseAddress.unsafelyUnwrapped + index
            guard entry.pointee.apply == nil else { return (false, WrittenValue.exchange(value, in: entry)) }
            WrittenValue.initialize(value, in: entry)
            // Formed here, where `Value` is known: applying the write is specialised, and the
            // closures capture nothing (no context to allocate).
            entry.pointee.apply = { storage, entry, writer, model, batch in
                WrittenValue<Value>.apply(entry, to: storage, writer: writer, model: model, into: &batch)
            }
            entry.pointee.destroy = { entry in WrittenValue<Value>.destroy(entry) }
            entry.pointee.writeOrder = order
            return (true, nil)
        }
        if isFirst { writes += 1 }
        checkInvariants()
        return replaced
    }

    var hasWrites: Bool { writes > 0 }

    mutating func hasReads() -> Bool {
        withEntries { entries in entries.contains { $0.readVersion != nil } }
    }

    /// Under the model's lock: why the transaction cannot commit, if a property it read changed.
    mutating func conflict(writer: UInt) -> Conflict? {
        withEntries { entries in
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
        withEntries { entries in
            var unnotified: [any ObservationNotifier] = []
            for index in entries.indices where entries[index].apply != nil {
                guard let notifier = entries[index].storage.unsafelyUnwrapped.observationNotifier else { continue }
                if !notified.contains(where: { $0 === notifier }) { unnotified.append(notifier) }
            }
            return unnotified
        }
    }

    /// Under the model's lock: applies every write, in the order of the first writes; each entry
    /// then holds the value its write replaced (released with the transaction, after the lock).
    mutating func applyWrites(writer: UInt, model: AnyObject, into batch: inout WriteBatch) {
        withEntries { entries in
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

    /// Stops the program if an invariant (see above) does not hold; debug builds only.
    @inlinable
    mutating func checkInvariants() {
        #if DEBUG
        let (count, writes) = (self.count, self.writes)
        precondition(count <= 3 ? spilled.isEmpty : spilled.count == count, "Internal inconsistency: entries")
        withEntries { entries in
            var orders: [Int] = []
            for entry in entries {
                precondition(entry.keyPath != nil && entry.storage != nil, "Internal inconsistency: vacant entry")
                if entry.apply != nil {
                    precondition(entry.destroy != nil, "Internal inconsistency: a written entry cannot destroy")
                    orders.append(entry.writeOrder)
                } else {
                    precondition(entry.boxed == nil, "Internal inconsistency: an unwritten entry holds a value")
                }
            }
            precondition(orders.sorted() == Array(0..<writes), "Internal inconsistency: write order")
        }
        if count < 3 {
            let vacant = [inline.0, inline.1, inline.2][count...]
            precondition(vacant.allSatisfy { $0.keyPath == nil && $0.apply == nil }, "Internal inconsistency")
        }
        #endif
    }
}

/// One property a transaction touched. Lives only in ``TransactionEntries``, which alone reads
/// and writes its bytes.
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
    /// is one object per call site). Retained when the entry is made and released by the
    /// container's `deinit`, so that its address cannot be reused meanwhile: unmanaged, so that
    /// moving entries and comparing key paths touch no reference count. `nil` in a vacant slot.
    @usableFromInline var keyPath: Unmanaged<AnyKeyPath>?
    /// Unowned: the model holds it, and the transaction holds the model. `nil` in a vacant slot.
    @usableFromInline unowned(unsafe) var storage: AnyPropertyStorage?
    /// The value the transaction wrote, if it wrote one and it fits (see ``WrittenValue``); once
    /// the write is applied, the value it replaced. Raw bytes, deinitialised only through
    /// ``destroy``.
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

/// How an entry keeps a written value of type `Value`: in its ``TransactionEntry/bytes`` when it
/// fits (every value up to four words: no existential box to make, no dynamic cast to read it
/// back), or else in ``TransactionEntry/boxed``. Used by ``TransactionEntries`` only, on entries
/// it has lent out.
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

    /// Puts the entry's first written value in it.
    @inlinable
    static func initialize(_ value: Value, in entry: UnsafeMutablePointer<TransactionEntry>) {
        if fits {
            UnsafeMutableRawPointer(slot(entry)).initializeMemory(as: Value.self, to: value)
        } else {
            entry.pointee.boxed = value
        }
    }

    /// Replaces the entry's written value with `value`; returns the one it held, without
    /// releasing it.
    @inlinable
    static func exchange(_ value: Value, in entry: UnsafeMutablePointer<TransactionEntry>) -> Value {
        if fits {
            let slot = slot(entry)
            let old = slot.move()
            slot.initialize(to: value)
            return old
        }
        let old = entry.pointee.boxed.take()
        entry.pointee.boxed = value
        return old as! Value
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
