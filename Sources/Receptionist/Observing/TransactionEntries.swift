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
/// - `count` entries: ``first``, ``second`` and ``third`` in turn while `count <= 3` (the others
///   vacant), all of them in ``spilled`` beyond that;
/// - an entry was written exactly when its `isWritten` is set; its slot then holds a value of the
///   type written;
/// - the written entries' `writeOrder`s are `0..<writes`, each once.
@usableFromInline
struct TransactionEntries: ~Copyable {
    // Three properties, not a tuple: the transaction's deinitialiser destroys a tuple this large
    // through the runtime's generic tuple witness (row: "update { 2 properties }").
    @usableFromInline var first = TransactionEntry()
    @usableFromInline var second = TransactionEntry()
    @usableFromInline var third = TransactionEntry()
    /// Every entry, once there are more than three.
    @usableFromInline var spilled: [TransactionEntry] = []
    @usableFromInline var count = 0
    /// How many of the entries were written.
    @usableFromInline var writes = 0
    /// Whether the transaction read a property from the model (see ``noteRead(version:at:)``):
    /// without reads, there is nothing to validate.
    @usableFromInline var hasReads = false
    /// Whether ``withEntries(_:)`` has lent the entries out.
    @usableFromInline var isLent = false

    @inlinable
    init() {}

    /// Destroys the values the entries hold: what the transaction's `deinit` does, once (nothing
    /// can use the transaction any more). Leaves the slots vacant, so a second call does nothing.
    mutating func destroyValues() {
        withEntries { entries in
            entries.forEachEntry { _, entry in
                guard entry.isWritten else { return }
                // Through `storage!` in the call, not a local: a local retains and releases it.
                entry.storage!.destroyWritten(&entry.slot)
                entry.isWritten = false
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
        case 0: return try body(&first)
        case 1: return try body(&second)
        default: return try body(&third)
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
        if count > 0 { try body(0, &first) }
        if count > 1 { try body(1, &second) }
        if count > 2 { try body(2, &third) }
    }

    @usableFromInline
    static var reentrancyMessage: String {
        "a ModelTransaction was used while it was already in use (from another thread, or from a "
            + "deinitialiser the library should not have run there); use it only inside its update(_:) closure, "
            + "on the thread that runs it"
    }

    /// Adds an entry for the property whose storage is `storage`.
    ///
    /// Fills a vacant inline entry in place: assigning a whole entry would copy it and destroy
    /// the vacant one first, both through the entry's value witnesses (it is too large for the
    /// compiler to do either inline).
    @inlinable
    mutating func append(storage: consuming AnyPropertyStorage) {
        validate(!isLent, Self.reentrancyMessage)
        switch count {
        case 0: first.name(storage)
        case 1: second.name(storage)
        case 2: third.name(storage)
        case 3:
            // Moved, not duplicated: the vacant slots left behind own nothing.
            spilled = [first, second, third, TransactionEntry(storage: storage)]
            (first, second, third) = (TransactionEntry(), TransactionEntry(), TransactionEntry())
        default: spilled.append(TransactionEntry(storage: storage))
        }
        count += 1
        checkInvariants()
    }

    /// The entry of `storage`.
    @inlinable
    mutating func firstIndex(of storage: AnyPropertyStorage) -> Int? {
        validate(!isLent, Self.reentrancyMessage)
        guard count <= 3 else { return spilled.firstIndex { $0.storage === storage } }
        if first.storage === storage { return 0 }
        if second.storage === storage { return 1 }
        if third.storage === storage { return 2 }
        return nil
    }

    /// The value the transaction wrote to the property of entry `index`, if it wrote one.
    @inlinable
    mutating func written<Value: Sendable>(at index: Int, as _: Value.Type) -> Value? {
        withEntries { entries in
            entries.withEntry(index) { entry in entry.isWritten ? entry.slot.load(as: Value.self) : nil }
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
        hasReads = true
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
                guard !entry.isWritten else { return (false, entry.slot.exchange(value)) }
                entry.slot.initialize(to: value)
                entry.isWritten = true
                entry.writeOrder = order
                return (true, nil)
            }
        }
        if isFirst { writes += 1 }
        checkInvariants()
        return replaced
    }

    var hasWrites: Bool { writes > 0 }

    /// Under the model's lock: why the transaction cannot commit, if a property it read changed.
    mutating func conflict(writer: UInt, _ lock: borrowing ModelLock) -> Conflict? {
        guard hasReads else { return nil }
        return withEntries { entries in
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
                guard entry.isWritten, let notifier = entry.storage?.observationNotifier(lock) else { return }
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
                guard entry.isWritten else { return }
                if entry.writeOrder != next { inOrder = false }
                next += 1
            }
            if inOrder {
                entries.forEachEntry { _, entry in entry.applyWrite(writer: writer, model: model, into: &batch, lock) }
                return
            }
            var written: [(order: Int, index: Int)] = []
            entries.forEachEntry { index, entry in
                if entry.isWritten { written.append((entry.writeOrder, index)) }
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
                precondition(entry.storage != nil, "Internal inconsistency: vacant entry")
                if entry.isWritten {
                    precondition(!entry.slot.isVacant, "Internal inconsistency: a written entry holds no value")
                    orders.append(entry.writeOrder)
                } else {
                    precondition(entry.slot.isVacant, "Internal inconsistency: an unwritten entry holds a value")
                }
            }
            precondition(orders.sorted() == Array(0..<writes), "Internal inconsistency: write order")
        }
        if count < 3 {
            let vacant = [first, second, third][count...]
            precondition(
                vacant.allSatisfy { $0.storage == nil && !$0.isWritten && $0.slot.isVacant },
                "Internal inconsistency: a vacant entry is in use")
        }
        #endif
    }
}

/// One property a transaction touched. Lives only in ``TransactionEntries``.
@usableFromInline
struct TransactionEntry {
    /// The property's storage. `nil` in a vacant slot.
    @usableFromInline var storage: AnyPropertyStorage?
    /// The value the transaction wrote, if it wrote one; once the write is applied, the value it
    /// replaced. Applied and destroyed only through the storage's ``WrittenValueOperations``.
    @usableFromInline var slot = WrittenSlot()
    /// Whether the transaction wrote the property (``slot`` then holds a value).
    @usableFromInline var isWritten = false
    /// The version read from the model, if the transaction read the model's value.
    @usableFromInline var readVersion: UInt64?
    /// Where its first write falls among the transaction's writes: they are applied in that order.
    @usableFromInline var writeOrder = 0

    /// A vacant inline slot.
    @inlinable
    init() {}

    @inlinable
    init(storage: AnyPropertyStorage) {
        self.storage = storage
    }

    /// Makes a vacant entry the entry of the property whose storage is `storage`, in place.
    @inlinable
    mutating func name(_ storage: consuming AnyPropertyStorage) {
        self.storage = storage
    }

    /// Applies the write, if the entry was written (see
    /// ``AnyPropertyStorage/applyWritten(_:writer:model:into:_:)``).
    mutating func applyWrite(writer: UInt, model: AnyObject, into batch: inout WriteBatch, _ lock: borrowing ModelLock)
    {
        guard isWritten else { return }
        // Through `storage!` in the call, not a local: a local retains and releases it.
        storage!.applyWritten(&slot, writer: writer, model: model, into: &batch, lock)
    }

    /// The storage, as the `PropertyStorage<Value>` it is: the entry was made for a storage found
    /// through a key path to a `Value`.
    @inlinable
    func typedStorage<Value: Sendable>(as _: Value.Type) -> PropertyStorage<Value> {
        WrittenValueOperations.typed(storage!, as: Value.self)
    }
}

/// How a transaction applies, and destroys, the values it writes to one property: held by the
/// property's storage, formed where its value type is known (``PropertyStorage/init(_:)``,
/// inlined where the property is declared), so that applying a write runs code specialised for
/// the value type. Held by the storage rather than by each transaction entry: an entry then holds
/// no closure to retain, release and destroy on every update (row: "update { 2 properties }").
/// Reached through ``AnyPropertyStorage/applyWritten(_:writer:model:into:_:)`` and
/// ``AnyPropertyStorage/destroyWritten(_:)``, which ``PropertyStorage`` overrides: held in the
/// subclass, after its fields, it leaves the fields every write uses where they were.
@usableFromInline
struct WrittenValueOperations: Sendable {
    /// Stores the written value `slot` holds in `storage` as a write by `writer`, handing the
    /// change to its observers, and leaves the value replaced in `slot`. Called under the
    /// model's lock.
    @usableFromInline
    typealias Apply =
        @Sendable (
            _ slot: inout WrittenSlot, _ storage: AnyPropertyStorage, _ writer: UInt, _ model: AnyObject,
            _ batch: inout WriteBatch, _ lock: borrowing ModelLock
        ) -> Void
    /// Destroys the value `slot` holds.
    @usableFromInline
    typealias Destroy = @Sendable (_ slot: inout WrittenSlot) -> Void

    @usableFromInline let apply: Apply
    @usableFromInline let destroy: Destroy

    /// The operations for values of type `Value`. Formed where `Value` is concrete, the closures
    /// capture nothing: no context to allocate.
    @inlinable
    init<Value: Sendable>(for _: Value.Type) {
        self.init(
            apply: { slot, storage, writer, model, batch, lock in
                let storage = Self.typed(storage, as: Value.self)
                let written = slot.take(as: Value.self)
                slot.initialize(to: storage.replace(with: written, writer: writer, model: model, into: &batch, lock))
            },
            destroy: { slot in slot.destroy(as: Value.self) })
    }

    @inlinable
    init(apply: @escaping Apply, destroy: @escaping Destroy) {
        self.apply = apply
        self.destroy = destroy
    }

    /// The operations of a storage no transaction reaches (an ``ObservableValue``'s). They
    /// mention no value type, so they capture nothing even where formed in generic code (where
    /// each closure of ``init(for:)`` would allocate a context for `Value`).
    @usableFromInline
    static let unreachable = WrittenValueOperations(
        apply: { _, _, _, _, _, _ in
            fatalError("Internal inconsistency: a transaction reached the storage of an ObservableValue")
        },
        destroy: { _ in
            fatalError("Internal inconsistency: a transaction reached the storage of an ObservableValue")
        })

    /// `storage`, the storage of a property of type `Value`, as the `PropertyStorage<Value>` it is.
    @inlinable
    static func typed<Value: Sendable>(_ storage: AnyPropertyStorage, as _: Value.Type) -> PropertyStorage<Value> {
        // Unsafe: skips the dynamic cast of the entry's storage, checked in debug builds by unsafeDowncast itself (row: "update { 2 properties }")
        unsafeDowncast(storage, to: PropertyStorage<Value>.self)
    }
}

/// A value of a type that only generic code knows, in four words of an entry without a box when
/// it fits (every value up to four words: no box to make, no dynamic cast to read it back), or
/// else in a ``WrittenBox``. The one type that treats a transaction's memory as raw bytes.
///
/// Every field is a plain value or a class reference, so that an entry is copied and destroyed
/// by inline code: with an existential (`Any?`) field, the compiler destroyed each entry of a
/// transaction through its value witness (row: "update { 2 properties }").
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
    /// The box of a value that does not fit in ``bytes``.
    @usableFromInline var boxed: AnyObject?
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
            boxed = WrittenBox(value)
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
        return (boxed.take() as! WrittenBox<Value>).value
    }

    /// A copy of the value.
    @inlinable
    mutating func load<Value>(as _: Value.Type) -> Value {
        check(Value.self, holding: true)
        if Self.fits(Value.self) { return withAddress(of: Value.self) { $0.pointee } }
        return (boxed as! WrittenBox<Value>).value
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

/// A written value that does not fit in a ``WrittenSlot``'s bytes.
@usableFromInline
final class WrittenBox<Value> {
    @usableFromInline let value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
