/// What an observation reports besides the new value, like KVO's `NSKeyValueObservingOptions`.
///
/// Every change carries its ``ObservedChange/newValue``; the options add the value before the
/// change (``old``, the default) and the current value on registration (``initial``).
public struct ObservationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    @inlinable
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Deliver the current value once, on registration, before any change
    /// (``ObservedChange/isInitial`` is `true`, ``ObservedChange/oldValue`` is `nil`).
    ///
    /// The initial value is read under the same lock as later changes, so it starts the chain:
    /// the first change's `oldValue` equals the initial `newValue`.
    @inlinable
    public static var initial: ObservationOptions { ObservationOptions(rawValue: 1 << 0) }
    /// Include the value before the change in ``ObservedChange/oldValue``.
    @inlinable
    public static var old: ObservationOptions { ObservationOptions(rawValue: 1 << 1) }
    /// Has no effect: every change carries its ``ObservedChange/newValue``.
    @available(*, deprecated, message: "every change carries its newValue; pass [.old] or [.initial, .old]")
    @inlinable
    public static var new: ObservationOptions { ObservationOptions(rawValue: 1 << 2) }
}
