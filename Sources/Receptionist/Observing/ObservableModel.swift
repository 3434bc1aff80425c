/// A class whose `@Observed` properties can be observed by key path.
///
/// ```swift
/// final class Thermometer: ObservableModel, @unchecked Sendable {
///     // @unchecked: every stored property is an @Observed (a reference to a locked box that is
///     // never reassigned) or a `let` of a Sendable type.
///     @Observed var celsius = 20.0
///     @Observed var status = "idle"
/// }
///
/// let thermometer = Thermometer()
/// let token = thermometer.receptionist(for: \.celsius, options: [.initial, .old, .new])
///     .deliver(on: DispatchQueue.main) { change in print(change.oldValue, change.newValue) }
/// thermometer.celsius = 21.5                      // any thread
/// thermometer.$celsius.update { $0 += 0.5 }       // atomic read-modify-write
/// ```
///
/// ## Two ways to declare observable state
/// - **`@Observed var`** gives plain property syntax (`model.celsius = 3`) and key paths of the
///   model (`\Thermometer.celsius`). Its storage is a `var` the compiler synthesises, so the
///   compiler cannot prove the class `Sendable`: declare it `@unchecked Sendable` (a subclass must
///   restate it). That is safe as long as every stored property is an `@Observed` or a `let` of a
///   `Sendable` type, since the synthesised `var` holds a reference to a locked box and is never
///   reassigned.
/// - **`let celsius = ObservableValue(20.0)`** keeps the class compiler-checked `Sendable`; you
///   write `model.celsius.value = 3` and observe with `model.celsius.receptionist()`, whose
///   changes carry the box as their object.
///
/// Both have the same guarantees (atomic writes, ordered lossless delivery, the old/new chain).
public protocol ObservableModel: AnyObject, Sendable {}

extension ObservableModel {
    /// Describes an observation of the `@Observed` property at `keyPath`; call
    /// ``Pipeline/deliver(on:buffering:_:)-(DeliveryTarget,_,_)`` on the result to start it.
    ///
    /// - Parameters:
    ///   - keyPath: a key path to an `@Observed` stored property declared in this class, such as
    ///     `\.celsius`. Anything else (a computed property, a plain stored property, a path through
    ///     another object) stops the program with a message naming the key path. A property
    ///     inherited from a superclass is observed through the class that declares it:
    ///     `(sensor as BaseSensor).receptionist(for: \.celsius)`.
    ///   - options: what each change reports; by default the old and the new value.
    public func receptionist<Value: Sendable>(
        for keyPath: KeyPath<Self, Value> & Sendable,
        options: ObservationOptions = [.old, .new]
    ) -> PropertyObservation<Self, Value> {
        guard let storage = ObservedPropertyCapture.storage(for: keyPath, of: self) else {
            preconditionFailure(
                "Receptionist: receptionist(for:) keyPath \(keyPath) is not an @Observed stored property "
                    + "declared in \(Self.self). Declare it `@Observed var`; observe an inherited property "
                    + "through the superclass that declares it; observe an ObservableValue box with "
                    + "box.receptionist()."
            )
        }
        return Pipeline(source: ObservedProperty(object: self, keyPath: keyPath, storage: storage, options: options))
    }
}
