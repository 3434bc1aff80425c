/// One change of an observed property, as delivered to a task block.
///
/// For one observation with ``ObservationOptions/old`` (the default) and a lossless buffer, changes form a chain: each change's ``oldValue`` equals the previous change's
/// ``newValue``, and the last ``newValue`` delivered equals the property's final value, however
/// many threads wrote it.
public struct ObservedChange<Object: AnyObject & Sendable, Value: Sendable>: Sendable {
    /// The observed object (for an ``ObservableValue``, the box itself).
    ///
    /// A change keeps its object alive until its task block has run (or the change was dropped
    /// or discarded).
    public let object: Object
    /// The observed property.
    public let keyPath: KeyPath<Object, Value> & Sendable
    /// The value before the change; `nil` for the initial value or without
    /// ``ObservationOptions/old``.
    public let oldValue: Value?
    /// The value after the change (or the current value, for the initial one).
    @inlinable
    public var newValue: Value { newValueStorage }
    /// Whether this is the value delivered on registration because of
    /// ``ObservationOptions/initial``.
    public let isInitial: Bool
    /// How many changes this one stands for: 1, except after `coalesce()`, which folds the changes
    /// made while one was waiting into a single change (``oldValue`` of the first, ``newValue``
    /// of the last; see <doc:Stages#coalesce>).
    @inlinable
    public var coalescedCount: Int { coalescedCountStorage }

    @usableFromInline var newValueStorage: Value
    @usableFromInline var coalescedCountStorage: Int

    /// Creates a change (for tests of code that handles changes, and for custom sources).
    @inlinable
    public init(
        object: Object,
        keyPath: KeyPath<Object, Value> & Sendable,
        oldValue: Value?,
        newValue: Value,
        isInitial: Bool,
        coalescedCount: Int = 1
    ) {
        self.object = object
        self.keyPath = keyPath
        self.oldValue = oldValue
        self.newValueStorage = newValue
        self.isInitial = isInitial
        self.coalescedCountStorage = coalescedCount
    }

    /// Folds `later` into this change in place: the old value of this one, the new value of
    /// `later`, the counts added up (the object and key path are the same for every change of
    /// one observation); `later` is left holding the new value this change had (what the fold
    /// let go of).
    @inlinable
    mutating func absorb(_ later: inout Self) {
        swap(&newValueStorage, &later.newValueStorage)
        coalescedCountStorage += later.coalescedCountStorage
    }
}

extension ObservedChange: StoredPropertyAliases {
    @usableFromInline
    static func storedAlias(of keyPath: AnyKeyPath) -> AnyKeyPath? {
        keyPath == \Self.newValue ? \Self.newValueStorage : nil
    }
}
