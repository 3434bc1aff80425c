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
    @inlinable
    public var oldValue: Value? { countAndFlags & Self.hasOldValue != 0 ? oldValueStorage : nil }
    /// The value after the change (or the current value, for the initial one).
    @inlinable
    public var newValue: Value { newValueStorage }
    /// Whether this is the value delivered on registration because of
    /// ``ObservationOptions/initial``.
    @inlinable
    public var isInitial: Bool { countAndFlags & Self.isInitialFlag != 0 }
    /// How many changes this one stands for: 1, except after `coalesce()`, which folds the changes
    /// made while one was waiting into a single change (``oldValue`` of the first, ``newValue``
    /// of the last; see <doc:Stages#coalesce>).
    @inlinable
    public var coalescedCount: Int { countAndFlags >> Self.countShift }

    // The stored layout is kept to few scalar fields on purpose: a change of a two-word value
    // with an optional old value and separate `isInitial` and count fields had 8, and from 8 the
    // compiler destroys the change through its type's value witness, found through its metadata
    // at run time (about 75 instructions per delivered change in the "@Observed → DispatchQueue
    // (lossless)" row), instead of two releases. So the old value is stored without an optional
    // (a copy of the new value when there is none) and the flags and the count share one word.

    /// The old value if ``countAndFlags`` has ``hasOldValue``; otherwise the new value again.
    @usableFromInline var oldValueStorage: Value
    @usableFromInline var newValueStorage: Value
    /// ``coalescedCount`` shifted by ``countShift``, with ``hasOldValue`` and ``isInitialFlag``.
    @usableFromInline var countAndFlags: Int

    @usableFromInline static var isInitialFlag: Int { 1 }
    @usableFromInline static var hasOldValue: Int { 2 }
    @usableFromInline static var countShift: Int { 2 }

    /// Creates a change (for tests of code that handles changes, and for custom sources).
    ///
    /// `coalescedCount` must lie within ±2⁶¹ (on 64-bit platforms); outside, the program stops
    /// with a message naming it.
    @inlinable
    public init(
        object: Object,
        keyPath: KeyPath<Object, Value> & Sendable,
        oldValue: Value?,
        newValue: Value,
        isInitial: Bool,
        coalescedCount: Int = 1
    ) {
        if _slowPath(coalescedCount < Int.min >> Self.countShift || coalescedCount > Int.max >> Self.countShift) {
            Self.countOutOfRange(coalescedCount)
        }
        self.init(
            object: object, keyPath: keyPath, oldValue: oldValue, newValue: newValue, isInitial: isInitial,
            count: coalescedCount)
    }

    /// A change whose `count` is known to fit (a count of writes the library made): what the
    /// engine builds for each delivered change, without the public initialiser's check.
    @inlinable
    init(
        object: Object,
        keyPath: KeyPath<Object, Value> & Sendable,
        oldValue: Value?,
        newValue: Value,
        isInitial: Bool,
        count: Int
    ) {
        self.object = object
        self.keyPath = keyPath
        if let oldValue {
            self.oldValueStorage = oldValue
            self.countAndFlags = count << Self.countShift | Self.hasOldValue
        } else {
            self.oldValueStorage = newValue
            self.countAndFlags = count << Self.countShift
        }
        self.newValueStorage = newValue
        if isInitial { self.countAndFlags |= Self.isInitialFlag }
    }

    /// Stops the program: `count` does not fit beside the flags. Out of line, so that building a
    /// change (once per delivered change) stays a compare and a branch.
    @usableFromInline
    static func countOutOfRange(_ count: Int) -> Never {
        invalidConfiguration(
            "ObservedChange(object:keyPath:oldValue:newValue:isInitial:coalescedCount:) coalescedCount must lie "
                + "within ±\(Int.max >> countShift), got \(count)")
    }

    /// Folds `later` into this change in place: the old value of this one, the new value of
    /// `later`, the counts added up (the object and key path are the same for every change of
    /// one observation); `later` is left holding the new value this change had (what the fold
    /// let go of).
    @inlinable
    mutating func absorb(_ later: inout Self) {
        swap(&newValueStorage, &later.newValueStorage)
        countAndFlags += later.coalescedCount << Self.countShift
        // Without an old value, the old value's place held this change's new value too: it moves
        // on with the new value, so that only `later` keeps what the fold let go of. (What it
        // releases here is not a last reference: `later` holds the same value.)
        if countAndFlags & Self.hasOldValue == 0 { oldValueStorage = newValueStorage }
    }
}

extension ObservedChange: StoredPropertyAliases {
    @usableFromInline
    static func storedAlias(of keyPath: AnyKeyPath) -> AnyKeyPath? {
        keyPath == \Self.newValue ? \Self.newValueStorage : nil
    }
}
