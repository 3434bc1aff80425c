/// The value of one observed property and the observations that watch it: the storage of an
/// `@Observed` property or of an ``ObservableValue``.
///
/// Guarded by its model's lock (``ModelRegistry``): every field is read and written only inside
/// `registry.state.withLock`. That lock is the model's, shared by all its properties, which is
/// why the fields are not in a `Mutex` of their own (hence `@unchecked Sendable`), and why they
/// skip the dynamic exclusivity checks that class properties otherwise pay on every access.
@usableFromInline
final class PropertyStorage<Value: Sendable>: AnyPropertyStorage, @unchecked Sendable {
    @usableFromInline @exclusivity(unchecked)
    var value: Value
    @usableFromInline @exclusivity(unchecked)
    var observers: [ValueObserver<Value>] = []

    @usableFromInline
    init(_ value: Value) {
        self.value = value
    }

    /// Stores `newValue` as a write by `writer` and hands the change, attributed to `model`, to
    /// every observer. Called under the model's lock.
    ///
    /// - Returns: the value replaced, to release after the lock.
    @inlinable
    func replace(with newValue: Value, writer: UInt, model: AnyObject, into batch: inout WriteBatch) -> Value {
        version &+= 1
        lastWriter = writer
        var old = newValue
        swap(&old, &value)
        emit(from: old, to: newValue, model: model, into: &batch)
        return old
    }

    /// Hands a write to every observer, in the order they were attached. Called under the
    /// model's lock.
    @inlinable
    func emit(from old: Value, to new: Value, model: AnyObject, into batch: inout WriteBatch) {
        // Indexed in place rather than through a local copy of the array, which would retain
        // and release its buffer on every write. Nothing changes `observers` during the loop:
        // observers do not attach or detach (that takes the lock, which this write holds).
        var index = 0
        while index < observers.count {
            // Guaranteed, not retained: the array holds the observer for the whole call, and
            // retaining it would make every writer thread write its reference count.
            Unmanaged.passUnretained(observers[index])._withUnsafeGuaranteedRef { observer in
                observer.didChange(old, new, model, &batch)
            }
            index += 1
        }
    }
}

/// What every ``PropertyStorage`` has whatever its value type: how Observation learns of the
/// property's changes, so that a transaction can tell Observation about the properties it writes.
@usableFromInline
class AnyPropertyStorage: @unchecked Sendable {
    // @unchecked: guarded by the model's lock, like the fields of PropertyStorage.

    /// Tells Observation (`ObservationRegistrar`) that the property is read or changes; `nil`
    /// until the property is first read through its getter (see ``ObservableModel``, "SwiftUI
    /// and Observation"), then never again. While it is `nil`, writes skip Observation entirely.
    /// Read and set under the model's lock; its methods are called outside it.
    @usableFromInline @exclusivity(unchecked)
    final var observationNotifier: (any ObservationNotifier)?
    /// Incremented by every write; lets an update detect a concurrent write.
    @usableFromInline @exclusivity(unchecked)
    final var version: UInt64 = 0
    /// The thread that made the last write; lets an update tell a concurrent write from one its
    /// own closure made.
    @usableFromInline @exclusivity(unchecked)
    final var lastWriter: UInt = 0

    @usableFromInline
    init() {}
}

/// Something that watches a ``PropertyStorage``: an observation of the property, or a snapshot
/// of several properties that includes it.
///
/// A closure formed where the observation's types are known, so that the per-write code is
/// specialised for them. Called under the model's lock: it must not call user code, take the
/// lock, or release a user value (it leaves those to the ``WriteBatch``).
@usableFromInline
final class ValueObserver<Value>: Sendable {
    @usableFromInline
    typealias DidChange = @Sendable (_ old: Value, _ new: Value, _ model: AnyObject, _ batch: inout WriteBatch) -> Void

    @usableFromInline let didChange: DidChange

    @usableFromInline
    init(didChange: @escaping DidChange) {
        self.didChange = didChange
    }
}
