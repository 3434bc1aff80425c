/// Makes a stored property of a class observable by key path, with atomic reads and writes.
///
/// ```swift
/// final class Sensor: ObservableModel, @unchecked Sendable {
///     // @unchecked: every stored property is an @Observed (see ObservableModel).
///     @Observed var reading = 0.0
/// }
/// let sensor = Sensor()
/// sensor.reading = 1.5                   // any thread
/// sensor.$reading.update { $0 += 1 }     // atomic read-modify-write
/// ```
///
/// Each write is applied under the model's lock and handed, in order, to every observation of
/// the property (see ``ObservableModelProtocol/receptionist(for:options:)``). The projected value
/// (`$reading`) offers an atomic ``ObservedProjection/update(_:)``. SwiftUI and Observation see
/// the property too, once it was read through its getter (see ``ObservableModel``, "SwiftUI and
/// Observation").
///
/// `@Observed` works on stored properties of ``ObservableModel`` subclasses only (it reaches the
/// model's lock through the enclosing instance). `model.count += 1` is a read and then a write:
/// two threads doing it can lose increments. Use `model.$count.update { $0 += 1 }`.
@propertyWrapper
public struct Observed<Value: Sendable>: Sendable {
    @usableFromInline
    let storage: PropertyStorage<Value>

    /// Creates the property's storage with its initial value.
    @inlinable
    public init(wrappedValue: Value) {
        storage = PropertyStorage(wrappedValue)
    }

    @available(
        *, unavailable, message: "@Observed is available only on stored properties of ObservableModel subclasses"
    )
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    @available(
        *, unavailable, message: "@Observed is available only on stored properties of ObservableModel subclasses"
    )
    public var projectedValue: ObservedProjection<Value> {
        fatalError("unavailable")
    }

    /// Reads and writes the property through its enclosing model.
    @inlinable
    public static subscript<EnclosingSelf: ObservableModel>(
        _enclosingInstance model: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> Value {
        get {
            let storage = model[keyPath: storageKeyPath].storage
            if ObservedPropertyCapture.isActive {
                ObservedPropertyCapture.offer(storage, for: wrappedKeyPath)
            }
            // Observation hears of the read after the value was read: tracking starts only when
            // the closure given to `withObservationTracking` returns, so the order makes no
            // difference, and one critical section is enough.
            let (value, notifier) = model.registry.readForAccess(storage)
            if let notifier {
                notifier.access(model)
            } else {
                model.registry.beginObservation(of: storage, in: model, keyPath: wrappedKeyPath)
            }
            return value
        }
        // Always inlined: when the setter is not, every write goes through `swift_getAtKeyPath`,
        // the runtime's generic key-path projection, which costs far more than the write itself.
        @inline(__always)
        set {
            model.registry.write(newValue, to: model[keyPath: storageKeyPath].storage, of: model)
        }
    }

    /// The projected value (`$property`): atomic read-modify-write on the property.
    @inlinable
    public static subscript<EnclosingSelf: ObservableModel>(
        _enclosingInstance model: EnclosingSelf,
        projected projectedKeyPath: KeyPath<EnclosingSelf, ObservedProjection<Value>>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> ObservedProjection<Value> {
        ObservedProjection(storage: model[keyPath: storageKeyPath].storage, model: model)
    }
}

/// The projected value of an `@Observed` property (`model.$property`).
public struct ObservedProjection<Value: Sendable> {
    @usableFromInline
    let storage: PropertyStorage<Value>
    @usableFromInline
    let model: ObservableModel

    @usableFromInline
    init(storage: PropertyStorage<Value>, model: ObservableModel) {
        self.storage = storage
        self.model = model
    }

    /// The current value.
    ///
    /// Unlike a read through the property itself (`model.reading`), this read is not reported to
    /// Observation: `withObservationTracking` does not track it.
    public var value: Value { model.registry.read(storage) }

    /// Atomically replaces the value with the result of `body` applied to it, as one change.
    ///
    /// `body` runs outside any lock; if another thread wrote the model meanwhile it runs again on
    /// the newer value, so it should only compute the new value. Observers see one change per
    /// successful update, attributed to the model; Observation sees one `willSet` before the
    /// change and one `didSet` after it, however many times `body` ran.
    ///
    /// - Returns: what `body` returned on the run whose result was stored.
    @inlinable
    @discardableResult
    public func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try model.registry.update(storage, of: model, body)
    }
}
