/// Makes a stored property of a class observable by key path, with atomic reads and writes.
///
/// ```swift
/// final class Sensor: ObservableModel, @unchecked Sendable {
///     // @unchecked: every stored property is an @Observed (see ObservableModel).
///     @Observed var reading = 0.0
/// }
/// sensor.reading = 1.5                   // any thread
/// sensor.$reading.update { $0 += 1 }     // atomic read-modify-write
/// ```
///
/// Each write is applied and handed, in order, to every receptionist observing the property
/// (see ``ObservableModel/receptionist(for:options:)``). The property stores an
/// ``ObservableValue``; the projected value (`$reading`) offers an atomic ``ObservedProjection/update(_:)``.
///
/// `@Observed` works on stored properties of classes only (it reaches its storage through the
/// enclosing instance). `model.count += 1` is a read and then a write: two threads doing it can
/// lose increments. Use `model.$count.update { $0 += 1 }`.
@propertyWrapper
public struct Observed<Value: Sendable>: Sendable {
    @usableFromInline
    let storage: ObservableValue<Value>

    /// Creates the property's storage with its initial value.
    public init(wrappedValue: Value) {
        storage = ObservableValue(wrappedValue)
    }

    @available(*, unavailable, message: "@Observed is available only on stored properties of classes")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    @available(*, unavailable, message: "@Observed is available only on stored properties of classes")
    public var projectedValue: ObservedProjection<Value> {
        fatalError("unavailable")
    }

    /// Reads and writes the property through its enclosing instance.
    @inlinable
    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance instance: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> Value {
        get {
            let storage = instance[keyPath: storageKeyPath].storage
            if ObservedPropertyCapture.isActive {
                ObservedPropertyCapture.offer(storage, for: wrappedKeyPath)
            }
            return storage.value
        }
        // Always inlined: when the setter is not, every write goes through `swift_getAtKeyPath`
        // (about 800 instructions in a profile).
        @inline(__always)
        set {
            instance[keyPath: storageKeyPath].storage.set(newValue, object: instance)
        }
    }

    /// The projected value (`$property`): atomic read-modify-write on the property.
    @inlinable
    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance instance: EnclosingSelf,
        projected projectedKeyPath: KeyPath<EnclosingSelf, ObservedProjection<Value>>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> ObservedProjection<Value> {
        ObservedProjection(storage: instance[keyPath: storageKeyPath].storage, object: instance)
    }
}

/// The projected value of an `@Observed` property (`model.$property`).
public struct ObservedProjection<Value: Sendable> {
    @usableFromInline
    let storage: ObservableValue<Value>
    @usableFromInline
    let object: AnyObject

    @usableFromInline
    init(storage: ObservableValue<Value>, object: AnyObject) {
        self.storage = storage
        self.object = object
    }

    /// The current value.
    public var value: Value { storage.value }

    /// Atomically replaces the value with the result of `body` applied to it, as one change.
    ///
    /// `body` runs outside any lock; if another thread wrote the property meanwhile it runs
    /// again on the newer value, so it should only compute the new value. Observers see one
    /// change per successful update, attributed to the model.
    ///
    /// - Returns: what `body` returned on the run whose result was stored.
    @discardableResult
    public func update<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.update(body, object: object)
    }
}
