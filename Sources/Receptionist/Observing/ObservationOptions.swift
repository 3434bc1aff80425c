/// What an observation reports, like KVO's `NSKeyValueObservingOptions`.
public struct ObservationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Deliver the current value once, on registration, before any change
    /// (``ObservedChange/isInitial`` is `true`, ``ObservedChange/oldValue`` is `nil`).
    ///
    /// The initial value is read under the same lock as later changes, so it starts the chain:
    /// the first change's `oldValue` equals the initial `newValue`.
    public static let initial = ObservationOptions(rawValue: 1 << 0)
    /// Include the value before the change in ``ObservedChange/oldValue``.
    public static let old = ObservationOptions(rawValue: 1 << 1)
    /// Include the value after the change in ``ObservedChange/newValue``.
    public static let new = ObservationOptions(rawValue: 1 << 2)
}
