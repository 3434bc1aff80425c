/// A thread-safe, observable value: a model with one property, `value`.
///
/// Use it when there is no model class, or as a `let` property of a model, which keeps the model
/// compiler-checked `Sendable` (see ``ObservableModel``). Keep state that changes together in
/// one box of a struct, so that its parts are always written and observed together.
///
/// ```swift
/// let progress = ObservableValue(0.0)
/// let token = progress.receptionist().deliver(on: DispatchQueue.main) { change in
///     bar.value = change.newValue
/// }
/// progress.value = 0.5                 // any thread
/// progress.update { $0 += 0.1 }        // atomic read-modify-write
/// ```
///
/// ## Threading contract
/// - Reads and writes are atomic and may come from any thread.
/// - Each write is applied and appended for every observation under one lock, so every
///   observation sees the writes in the order they were applied, and the old value of each
///   change is exactly the value the previous write left.
/// - No user code runs under that lock: task blocks run later on their targets, and the
///   closure given to ``update(_:)`` runs outside it.
/// - When the box is deallocated, its observations finish. Changes waiting for delivery keep
///   the box alive.
///
/// ## SwiftUI and Observation
/// The box is `Observable` where Observation is available (macOS 14, iOS 17, tvOS 17,
/// watchOS 10, visionOS 1): `withObservationTracking { box.value }`, SwiftUI and `Observations`
/// react to `value`, exactly as for an `@Observed` property of an ``ObservableModel`` (the same
/// rules, threads and costs; see "SwiftUI and Observation" there). Its registrar is made by the
/// first read of `value`.
public final class ObservableValue<Value: Sendable>: Sendable {
    /// The box's lock and its observations.
    @usableFromInline
    let registry = ModelRegistry()
    /// The value, guarded by `registry`.
    @usableFromInline
    let storage: PropertyStorage<Value>

    /// Creates a box holding `value`.
    public init(_ value: Value) {
        storage = PropertyStorage(boxing: value)
    }

    deinit {
        registry.modelDidEnd()
    }

    /// The current value. Setting it notifies every observation of the box.
    ///
    /// Reading it reports the read to Observation (see "SwiftUI and Observation" above).
    @inlinable
    public var value: Value {
        get {
            let (value, notifier) = registry.readForAccess(storage)
            if let notifier {
                notifier.access(self)
            } else {
                registry.beginObservation(of: self)
            }
            return value
        }
        set { registry.write(newValue, to: storage, of: self) }
    }

    /// Atomically replaces the value with the result of `body` applied to it, as one change.
    ///
    /// `body` runs outside the box's lock, on a copy of the current value. If another thread
    /// changed the value meanwhile, `body` runs again on the newer value, so it should only
    /// compute the new value (no side effects). Two threads that each run `update { $0 += 1 }`
    /// never lose an increment, unlike `box.value += 1`, which is a read and then a write.
    ///
    /// `body` may read the box (and anything else); if it writes the box itself, the update can
    /// never commit and the program stops with a message saying so. Observation sees one
    /// `willSet` before the change and one `didSet` after it, however many times `body` ran.
    ///
    /// - Returns: what `body` returned on the run whose result was stored.
    @discardableResult
    @inlinable
    public func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try registry.update(storage, of: self, body)
    }

    /// Describes an observation of this box; call `deliver(on:)` on the result to start it.
    ///
    /// Changes carry the box as ``ObservedChange/object`` and `\ObservableValue.value` as
    /// ``ObservedChange/keyPath``.
    @inlinable
    public func receptionist(
        options: ObservationOptions = [.old]
    ) -> PropertyObservation<ObservableValue<Value>, Value> {
        Pipeline(
            source: ObservedProperty(
                object: self, keyPath: \.value, registry: registry, storage: storage, options: options))
    }
}
