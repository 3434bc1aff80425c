/// The value of one observed property and the observations that watch it: the storage of an
/// `@Observed` property or of an ``ObservableValue``.
///
/// Guarded by its model's lock (``ModelRegistry``), which all the model's properties share, so
/// its fields are not in a `Locked` of their own: they are reached only through the accessors
/// below, each of which takes the proof that the lock is held (``ModelLock``).
@usableFromInline
// Unsafe: the fields are reached only with a ModelLock (test: SnapshotStressTests)
final class PropertyStorage<Value: Sendable>: AnyPropertyStorage, @unchecked Sendable {
    // @unchecked: the fields are reached only with a ModelLock, under the model's lock.

    /// The fields the model's lock guards; only the accessors below touch them.
    @usableFromInline
    struct Fields {
        @usableFromInline var value: Value
        @usableFromInline var observers: [ValueObserver<Value>] = []

        @inlinable
        init(value: Value) {
            self.value = value
        }
    }

    // Unsafe: the model's lock, not the class, guards it (the accessors take its proof); the dynamic check costs every write (row: "@Observed → DispatchQueue (lossless)")
    @usableFromInline @exclusivity(unchecked)
    var fields: Fields

    /// How a transaction applies and destroys the values it writes to this property
    /// (``WrittenValueOperations/unreachable`` in an ``ObservableValue``'s storage, which no
    /// transaction reaches). After ``fields``, so that the fields every write uses keep their
    /// place in the object.
    @usableFromInline let writtenValues: WrittenValueOperations

    /// The storage of an `@Observed` property. Inlined where the property is declared, so that
    /// the transaction operations it forms are specialised for the value type (see
    /// ``WrittenValueOperations``); formed in generic code, each of their closures would
    /// allocate a context.
    @inlinable
    init(_ value: Value) {
        fields = Fields(value: value)
        writtenValues = WrittenValueOperations(for: Value.self)
    }

    /// The storage of an ``ObservableValue``, which no transaction reaches.
    @usableFromInline
    init(boxing value: Value) {
        fields = Fields(value: value)
        writtenValues = .unreachable
    }

    @usableFromInline
    override func applyWritten(
        _ slot: inout WrittenSlot, writer: UInt, model: AnyObject, into batch: inout WriteBatch,
        _ lock: borrowing ModelLock
    ) {
        writtenValues.apply(&slot, self, writer, model, &batch, lock)
    }

    @usableFromInline
    override func destroyWritten(_ slot: inout WrittenSlot) {
        writtenValues.destroy(&slot)
    }

    /// The value.
    @inlinable
    func value(_ lock: borrowing ModelLock) -> Value {
        lock.check(&shared.binding)
        return fields.value
    }

    /// The observers, in the order they attached, for `body` to read or change.
    @inlinable
    func withObservers<Result>(
        _ lock: borrowing ModelLock,
        _ body: (inout [ValueObserver<Value>]) -> Result
    ) -> Result {
        lock.check(&shared.binding)
        return body(&fields.observers)
    }

    /// Stores `newValue` as a write by `writer` and hands the change, attributed to `model`, to
    /// every observer.
    ///
    /// - Returns: the value replaced, to release after the lock.
    @inlinable
    func replace(
        with newValue: Value,
        writer: UInt,
        model: AnyObject,
        into batch: inout WriteBatch,
        _ lock: borrowing ModelLock
    ) -> Value {
        noteWrite(by: writer, lock)
        var old = newValue
        swap(&old, &fields.value)
        emit(from: old, to: newValue, model: model, into: &batch, lock)
        return old
    }

    /// Hands a write to every observer, in the order they were attached.
    @inlinable
    func emit(
        from old: Value, to new: Value, model: AnyObject, into batch: inout WriteBatch, _ lock: borrowing ModelLock
    ) {
        // Indexed in place rather than through a local copy of the array, which would retain
        // and release its buffer on every write. Nothing changes `observers` during the loop:
        // observers do not attach or detach (that takes the lock, which this write holds).
        lock.check(&shared.binding)
        var index = 0
        while index < fields.observers.count {
            // Unsafe: borrowed, not retained: the array holds the observer for the whole call, and retaining it makes every writer thread write its reference count (row: "@Observed → DispatchQueue (lossless)")
            Unmanaged.passUnretained(fields.observers[index])._withUnsafeGuaranteedRef { observer in
                observer.didChange(old, new, model, &batch, lock)
            }
            index += 1
        }
    }
}

/// What every ``PropertyStorage`` has whatever its value type: how Observation learns of the
/// property's changes, and what lets an optimistic update detect a concurrent write; so that a
/// transaction can reach them without the value type. Guarded by the model's lock, like the
/// fields of ``PropertyStorage``.
@usableFromInline
class AnyPropertyStorage: @unchecked Sendable {  // Unsafe: fields behind ModelLock (test: SnapshotStressTests)
    // @unchecked: the fields are reached only with a ModelLock, under the model's lock.

    /// The fields the model's lock guards; only the accessors below touch them.
    @usableFromInline
    struct SharedFields {
        /// Tells Observation (`ObservationRegistrar`) that the property is read or changes;
        /// `nil` until the property is first read through its getter (see ``ObservableModel``,
        /// "SwiftUI and Observation"), then never again. While it is `nil`, writes skip
        /// Observation entirely. Its methods are called outside the lock.
        @usableFromInline var observationNotifier: (any ObservationNotifier)?
        /// Incremented by every write; lets an update detect a concurrent write.
        @usableFromInline var version: UInt64 = 0
        /// The thread that made the last write; lets an update tell a concurrent write from one
        /// its own closure made.
        @usableFromInline var lastWriter: UInt = 0
        /// The model whose lock guards these fields and the subclass's (debug builds).
        @usableFromInline var binding = ModelLockBinding()

        @inlinable
        init() {}
    }

    // Unsafe: the model's lock, not the class, guards it (the accessors take its proof); the dynamic check costs every write (row: "@Observed → DispatchQueue (lossless)")
    @usableFromInline @exclusivity(unchecked)
    final var shared = SharedFields()

    @usableFromInline
    init() {}

    /// Stores the value a transaction wrote, which `slot` holds, as a write by `writer`, handing
    /// the change to the observers, and leaves the value replaced in `slot`; under the model's
    /// lock. ``PropertyStorage`` applies it with its ``WrittenValueOperations`` (every storage is
    /// one).
    @usableFromInline
    func applyWritten(
        _ slot: inout WrittenSlot, writer: UInt, model: AnyObject, into batch: inout WriteBatch,
        _ lock: borrowing ModelLock
    ) {
        fatalError("Internal inconsistency: a property storage that is not a PropertyStorage")
    }

    /// Destroys the value a transaction wrote or replaced, which `slot` holds (see
    /// ``applyWritten(_:writer:model:into:_:)``).
    @usableFromInline
    func destroyWritten(_ slot: inout WrittenSlot) {
        fatalError("Internal inconsistency: a property storage that is not a PropertyStorage")
    }

    /// The property's notifier, if it was read through its getter.
    @inlinable
    final func observationNotifier(_ lock: borrowing ModelLock) -> (any ObservationNotifier)? {
        lock.check(&shared.binding)
        return shared.observationNotifier
    }

    /// Gives the property its notifier (once: see ``SharedFields/observationNotifier``).
    @inlinable
    final func setObservationNotifier(_ notifier: any ObservationNotifier, _ lock: borrowing ModelLock) {
        lock.check(&shared.binding)
        shared.observationNotifier = notifier
    }

    /// How many writes the property had.
    @inlinable
    final func version(_ lock: borrowing ModelLock) -> UInt64 {
        lock.check(&shared.binding)
        return shared.version
    }

    /// The thread that made the last write.
    @inlinable
    final func lastWriter(_ lock: borrowing ModelLock) -> UInt {
        lock.check(&shared.binding)
        return shared.lastWriter
    }

    /// Counts a write by `writer`.
    @inlinable
    final func noteWrite(by writer: UInt, _ lock: borrowing ModelLock) {
        lock.check(&shared.binding)
        shared.version &+= 1
        shared.lastWriter = writer
    }
}

/// Something that watches a ``PropertyStorage``: an observation of the property, or a snapshot
/// of several properties that includes it.
///
/// A closure formed where the observation's types are known, so that the per-write code is
/// specialised for them. Called under the model's lock (it is handed the proof): it must not
/// call user code, take the lock, or release a user value (it leaves those to the
/// ``WriteBatch``).
@usableFromInline
final class ValueObserver<Value>: Sendable {
    @usableFromInline
    typealias DidChange =
        @Sendable (
            _ old: Value, _ new: Value, _ model: AnyObject, _ batch: inout WriteBatch, _ lock: borrowing ModelLock
        ) -> Void

    @usableFromInline let didChange: DidChange

    @usableFromInline
    init(didChange: @escaping DidChange) {
        self.didChange = didChange
    }
}
