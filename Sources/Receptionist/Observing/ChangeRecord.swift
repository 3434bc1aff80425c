/// What an observation buffers for one change: the values only. The object and key path are
/// the observation's, so the ``ObservedChange`` is built when the change is delivered.
@usableFromInline
struct ChangeRecord<Value> {
    /// The value before the change; `nil` for the initial value or without `.old`.
    @usableFromInline var old: Value?
    /// The value after the change (or the current value, for the initial one).
    @usableFromInline var new: Value
    /// How many writes the record stands for (more than 1 after coalescing).
    @usableFromInline var count: Int
    @usableFromInline var isInitial: Bool

    @inlinable
    init(old: Value?, new: Value, count: Int = 1, isInitial: Bool = false) {
        self.old = old
        self.new = new
        self.count = count
        self.isInitial = isInitial
    }

    /// Folds `later` into this record in place: this record's old value, `later`'s new value,
    /// the counts added up; `later` is left holding the new value this record had (what the fold
    /// let go of).
    @inlinable
    mutating func absorb(_ later: inout ChangeRecord) {
        swap(&new, &later.new)
        count += later.count
    }
}

extension ChangeRecord: Sendable where Value: Sendable {}
