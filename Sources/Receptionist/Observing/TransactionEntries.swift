/// The properties one transaction touched and the values it wrote.
///
/// ## Ownership
/// Noncopyable: the container is its transaction's, and the values its entries hold (the values
/// the transaction wrote; once they are applied, the values they replaced) are destroyed once,
/// by ``destroyValues()``, which the transaction's `deinit` calls. An entry keeps its value in a ``WrittenSlot``, the one type that handles a
/// transaction's raw memory (as swift-collections' `Deque` keeps its buffer behind one
/// `_UnsafeHandle`); everything else here is ordinary Swift. Entries are reached in place
/// (``withEntry(_:_:)``), and moved (into the spill array), never duplicated while they hold a
/// value.
///
/// ## No user code while the entries are lent
/// A value's deinitialiser is user code, and it may use the transaction (a value can hold it).
/// So no value is released while the entries are lent: a second write moves the value it
/// replaces out of its entry and hands it back to be released afterwards
/// (``write(_:at:)``), and applying the writes leaves each replaced value in its entry (that runs
/// under the model's lock anyway). Should anything on the same thread reach the entries while
/// they are lent all the same (re-entrantly, from code the lent use ran), the program stops with
/// a message instead of reading or writing memory that is being changed (``withEntries(_:)``).
/// That check is for the same thread only (``isLent`` is a plain flag): use from another thread
/// at the same time is ruled out at compile time, since ``ModelTransaction`` is not `Sendable`;
/// a program that smuggles it across threads anyway is not checked.
///
/// ## Invariants
/// Checked after every change in debug builds (``checkInvariants()``), and by each
/// ``WrittenSlot`` on every access:
/// - `count` entries: the first `count` of ``inline`` while `count <= 3` (the others vacant),
///   all of them in ``spilled`` beyond that;
/// - an entry was written exactly when its `apply` is set; it then has a `destroy`, and its slot
///   holds a value of the type written;
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

    /// Destroys the values the entries hold: what the transaction's `deinit` does, once (nothing
    /// can use the transaction any more). Leaves the slots vacant, so a second call does nothing.
    mutating func destroyValues() {
        withEntries { entries in
            entries.forEachEntry { _, entry in
                guard let destroy = entry.destroy else { return }
                destroy(&entry.slot)
                entry.destroy = nil
            }
        }
    }

    /// Runs `body` with the entries lent out: stops the program if they are lent already (on this
    /// thread: see "No user code while the entries are lent").
    /// `body` must not run user code (see above).
    @inlinable
    mutating func withEntries<Result>(_ body: (inout Self) throws -> Result) rethrows -> Result {
        validate(!isLent, Self.reentrancyMessage)
        isLent = true
        defer { isLent = false }
        return try body(&self)
    }

    /// Runs `body` with entry `index` in place.
    @inlinable
    mutating func withEntry<Result>(_ index: Int, _ body: (inout TransactionEntry) throws -> Result) rethrows
        -> Result
    {
        precondition(index >= 0 && index < count, "Internal inconsistency: no such entry")
        guard count <= 3 else { return try body(&spilled[index]) }
        switch index {
        case 0: return try body(&inline.0)
        case 1: return try body(&inline.1)
        default: return try body(&inline.2)
        }
    }

    /// Runs `body` with each entry in place, in order. (The spill array is reached only when it
    /// is in use: an access to it inside a loop lets the optimiser make the empty array unique
    /// before the loop, which allocates.)
    @inlinable
    mutating func forEachEntry(_ body: (Int, inout TransactionEntry) throws -> Void) rethrows {
        guard count <= 3 else {
            for index in spilled.indices { try body(index, &spilled[index]) }
            return
        }
        if count > 0 { try body(0, &inline.0) }
        if count > 1 { try body(1, &inline.1) }
        if count > 2 { try body(2, &inline.2) }
    }

    @usableFromInline
    static var reentrancyMessage: String {
        "a ModelTransaction was used while it was already in use (from another thread, or from a "
            + "deinitialiser the library should not have run there); use it only inside its update(_:) closure, "
            + "on the thread that runs it"
    }

    /// Adds `entry` (made by `TransactionEntry(keyPath:storage:)`).
    ///
    /// Takes the entry made at the call site, and returns nothing: so small, it leaves the
    /// transaction's code small enough to be inlined where `update` is called, and the transaction
    /// itself on the stack (a wrapper that made the entry here would cost an allocation per
    /// update, which the allocation counter of the "update { 2 properties }" row shows).
    @inlinable
    mutating func append(_ entry: consuming TransactionEntry) {
        validate(!isLent, Self.reentrancyMessage)
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
        validate(!isLent, Self.reentrancyMessage)
        guard count <= 3 else { return spilled.firstIndex { $0.keyPath === keyPath } }
        if inline.0.keyPath === keyPath { return 0 }
        if inline.1.keyPath === keyPath { return 1 }
        if inline.2.keyPath === keyPath { return 2 }
        return nil
    }

    /// The entry of `storage`.
    @inlinable
    mutating func firstIndex(of storage: AnyPropertyStorage) -> Int? {
        validate(!isLent, Self.reentrancyMessage)
        guard count <= 3 else { return spilled.firstIndex { $0.storage === storage } }
        if inline.0.storage === storage { return 0 }
        if inline.1.storage === storage { return 1 }
        if inline.2.storage === storage { return 2 }
        return nil
    }

    /// The value the transaction wrote to the property of entry `index`, if it wrote one.
    @inlinable
    mutating func written<Value: Sendable>(at index: Int, as _: Value.Type) -> Value? {
        withEntries { entries in
            entries.withEntry(index) { entry in entry.apply == nil ? nil : entry.slot.load(as: Value.self) }
        }
    }

    /// The storage of entry `index`, whose values are `Value`s.
    @inlinable
    mutating func storage<Value: Sendable>(at index: Int, as _: Value.Type) -> PropertyStorage<Value> {
        withEntries { entries in entries.withEntry(index) { entry in entry.typedStorage(as: Value.self) } }
    }

    /// The transaction read `version` of the property of entry `index` (the first read counts).
    @inlinable
    mutating func noteRead(version: UInt64, at index: Int) {
        withEntries { entries in
            entries.withEntry(index) { entry in
                if entry.readVersion == nil { entry.readVersion = version }
            }
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
            entries.withEntry(index) { entry -> (Bool, Value?) in
                guard entry.apply == nil else { return (false, entry.slot.exchange(value)) }
                entry.slot.initialize(to: value)
                // Formed here, where `Value` is known: applying the write is specialised, and the
                // closures capture nothing (no context to allocate).
                entry.apply = { entry, writer, model, batch, lock in
                    let storage = entry.typedStorage(as: Value.self)
                    let written = entry.slot.take(as: Value.self)
                    entry.slot.initialize(
                        to: storage.replace(with: written, writer: writer, model: model, into: &batch, lock))
                }
                entry.destroy = { slot in slot.destroy(as: Value.self) }
                entry.writeOrder = order
                return (true, nil)
            }
        }
        if isFirst { writes += 1 }
        checkInvariants()
        return replaced
    }

    var hasWrites: Bool { writes > 0 }

    mutating func hasReads() -> Bool {
        withEntries { entries in
            var hasReads = false
            entries.forEachEntry { _, entry in hasReads = hasReads || entry.readVersion != nil }
            return hasReads
        }
    }

    /// Under the model's lock: why the transaction cannot commit, if a property it read changed.
    mutating func conflict(writer: UInt, _ lock: borrowing ModelLock) -> Conflict? {
        withEntries { entries in
            var conflict: Conflict?
            entries.forEachEntry { _, entry in
                guard conflict == nil, let readVersion = entry.readVersion, let storage = entry.storage,
                    storage.version(lock) != readVersion
                else { return }
                conflict = storage.lastWriter(lock) == writer ? .selfInflicted : .concurrentWrite
            }
            return conflict
        }
    }

    /// Under the model's lock: the notifiers of the written properties that are not in
    /// `notified`, in the order of the entries.
    mutating func unnotified(
        _ notified: [any ObservationNotifier], _ lock: borrowing ModelLock
    ) -> [any ObservationNotifier] {
        withEntries { entries in
            var unnotified: [any ObservationNotifier] = []
            entries.forEachEntry { _, entry in
                guard entry.apply != nil, let notifier = entry.storage?.observationNotifier(lock) else { return }
                if !notified.contains(where: { $0 === notifier }) { unnotified.append(notifier) }
            }
            return unnotified
        }
    }

    /// Under the model's lock: applies every write, in the order of the first writes; each entry
    /// then holds the value its write replaced (released with the transaction, after the lock).
    mutating func applyWrites(writer: UInt, model: AnyObject, into batch: inout WriteBatch, _ lock: borrowing ModelLock)
    {
        withEntries { entries in
            // Usually the entries are in that order already (nothing was read before it was
            // written): then no array of indices is made.
            var inOrder = true
            var next = 0
            entries.forEachEntry { _, entry in
                guard entry.apply != nil else { return }
                if entry.writeOrder != next { inOrder = false }
                next += 1
            }
            if inOrder {
                entries.forEachEntry { _, entry in entry.applyWrite(writer: writer, model: model, into: &batch, lock) }
                return
            }
            var written: [(order: Int, index: Int)] = []
            entries.forEachEntry { index, entry in
                if entry.apply != nil { written.append((entry.writeOrder, index)) }
            }
            for (_, index) in written.sorted(by: { $0.order < $1.order }) {
                entries.withEntry(index) { entry in entry.applyWrite(writer: writer, model: model, into: &batch, lock) }
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
            entries.forEachEntry { _, entry in
                precondition(entry.keyPath != nil && entry.storage != nil, "Internal inconsistency: vacant entry")
                if entry.apply != nil {
                    precondition(entry.destroy != nil, "Internal inconsistency: a written entry cannot destroy")
                    precondition(!entry.slot.isVacant, "Internal inconsistency: a written entry holds no value")
                    orders.append(entry.writeOrder)
                } else {
                    precondition(entry.slot.isVacant, "Internal inconsistency: an unwritten entry holds a value")
                }
            }
            precondition(orders.sorted() == Array(0..<writes), "Internal inconsistency: write order")
        }
        if count < 3 {
            let vacant = [inline.0, inline.1, inline.2][count...]
            precondition(
                vacant.allSatisfy { $0.keyPath == nil && $0.apply == nil && $0.slot.isVacant },
                "Internal inconsistency: a vacant entry is in use")
        }
        #endif
    }
}

/// One property a transaction touched. Lives only in ``TransactionEntries``.
@usableFromInline
struct TransactionEntry {
    /// Stores the entry's written value in its storage as a write by `writer`, handing the
    /// change to its observers, and leaves the value replaced in the entry. Called under the
    /// model's lock.
    @usableFromInline
    typealias Apply = (
        _ entry: inout TransactionEntry, _ writer: UInt, _ model: AnyObject, _ batch: inout WriteBatch,
        _ lock: borrowing ModelLock
    ) -> Void
    /// Destroys the value the slot holds.
    @usableFromInline
    typealias Destroy = (_ slot: inout WrittenSlot) -> Void

    /// The key path the transaction first named it by (compared by identity: a key path literal
    /// is one object per call site; held, so that its address cannot be reused meanwhile).
    /// `nil` in a vacant slot.
    @usableFromInline var keyPath: AnyKeyPath?
    /// The property's storage. `nil` in a vacant slot.
    // Unsafe: no reference counting per entry: the model holds the storage, the transaction the model (row: "update { 2 properties }")
    @usableFromInline unowned(unsafe) var storage: AnyPropertyStorage?
    /// The value the transaction wrote, if it wrote one; once the write is applied, the value it
    /// replaced. Destroyed only through ``destroy``.
    @usableFromInline var slot = WrittenSlot()
    /// How to apply the write; set by the first write (so: whether the entry was written).
    @usableFromInline var apply: Apply?
    /// How to destroy the value in ``slot``; set by the first write.
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
        self.keyPath = keyPath
        self.storage = storage
    }

    /// Applies the write, if the entry was written (see ``Apply``).
    mutating func applyWrite(writer: UInt, model: AnyObject, into batch: inout WriteBatch, _ lock: borrowing ModelLock)
    {
        guard let apply else { return }
        apply(&self, writer, model, &batch, lock)
    }

    /// The storage, as the `PropertyStorage<Value>` it is: the entry was made for a storage found
    /// through a key path to a `Value`.
    @inlinable
    func typedStorage<Value: Sendable>(as _: Value.Type) -> PropertyStorage<Value> {
        // Unsafe: skips the dynamic cast of the entry's storage, checked in debug builds by unsafeDowncast itself (row: "update { 2 properties }")
        unsafeDowncast(storage!, to: PropertyStorage<Value>.self)
    }
}

/// A value of a type that only generic code knows, in four words of an entry without a box when
/// it fits (every value up to four words: no existential box to make, no dynamic cast to read it
/// back), or else in an existential. The one type that treats a transaction's memory as raw
/// bytes.
///
/// Invariants, checked on every access in debug builds: a slot is vacant or holds exactly one
/// value of the type it was initialised with; it is initialised only while vacant, and read,
/// taken or destroyed only as that type. Copying a slot that holds a value duplicates it without
/// retaining it: only ``TransactionEntries`` copies entries, and only to move them (it leaves a
/// vacant entry behind), which is sound because a value is stored inline only if it is bitwise
/// takable.
@usableFromInline
struct WrittenSlot {
    @usableFromInline var bytes: (UInt, UInt, UInt, UInt) = (0, 0, 0, 0)
    /// A value that does not fit in ``bytes``.
    @usableFromInline var boxed: Any?
    #if DEBUG
    /// The type of the value held, `nil` while vacant.
    @usableFromInline var heldType: ObjectIdentifier?
    #endif

    @inlinable
    init() {}

    #if DEBUG
    @usableFromInline var isVacant: Bool { heldType == nil }
    #endif

    /// Whether a `Value` is kept in ``bytes``. Bitwise takable too: entries are moved by copying
    /// their bytes (into the spill array, as it grows), which a value the runtime tracks by
    /// address (an Objective-C weak reference, a C++ type with its own move) does not survive.
    @inlinable
    static func fits<Value>(_: Value.Type) -> Bool {
        MemoryLayout<Value>.size <= MemoryLayout<(UInt, UInt, UInt, UInt)>.size
            && MemoryLayout<Value>.alignment <= MemoryLayout<UInt>.alignment && _isBitwiseTakable(Value.self)
    }

    /// Runs `body` on the value's memory in ``bytes``; `Value` must fit.
    @inlinable
    mutating func withAddress<Value, Result>(
        // Unsafe: the written value's memory, reached in this type only (row: "update { 2 properties }")
        of _: Value.Type, _ body: (UnsafeMutablePointer<Value>) -> Result
    ) -> Result {
        // Unsafe: keeps a written value inline, no box per write (row: "update { 2 properties }")
        withUnsafeMutableBytes(of: &bytes) { body($0.baseAddress!.assumingMemoryBound(to: Value.self)) }
    }

    /// Stops the program if the slot does not hold a `Value` (or, with `holding` false, is not
    /// vacant); debug builds only.
    @inlinable
    func check<Value>(_: Value.Type, holding: Bool) {
        #if DEBUG
        let expected = holding ? ObjectIdentifier(Value.self) : nil
        precondition(
            heldType == expected,
            "Internal inconsistency: a written slot \(heldType == nil ? "that is vacant" : "that holds a value") "
                + "used as \(holding ? "holding" : "vacant for") a \(Value.self)")
        #endif
    }

    @inlinable
    mutating func initialize<Value>(to value: Value) {
        check(Value.self, holding: false)
        if Self.fits(Value.self) {
            withAddress(of: Value.self) { $0.initialize(to: value) }
        } else {
            boxed = value
        }
        #if DEBUG
        heldType = ObjectIdentifier(Value.self)
        #endif
    }

    /// Moves the value out; the slot is vacant afterwards.
    @inlinable
    mutating func take<Value>(as _: Value.Type) -> Value {
        check(Value.self, holding: true)
        #if DEBUG
        heldType = nil
        #endif
        if Self.fits(Value.self) { return withAddress(of: Value.self) { $0.move() } }
        return boxed.take() as! Value
    }

    /// A copy of the value.
    @inlinable
    mutating func load<Value>(as _: Value.Type) -> Value {
        check(Value.self, holding: true)
        if Self.fits(Value.self) { return withAddress(of: Value.self) { $0.pointee } }
        return boxed as! Value
    }

    /// Replaces the value with `value`; returns the one it held, without releasing it.
    @inlinable
    mutating func exchange<Value>(_ value: Value) -> Value {
        let old = take(as: Value.self)
        initialize(to: value)
        return old
    }

    /// Destroys the value; the slot is vacant afterwards.
    @inlinable
    mutating func destroy<Value>(as _: Value.Type) {
        _ = take(as: Value.self)
    }
}
