/// A property of an object, as the source of a ``Pipeline``: its changes are the pipeline's
/// elements.
///
/// Get the pipeline from ``ObservableModelProtocol/receptionist(for:options:)`` or
/// ``ObservableValue/receptionist(options:)``, add stages if you like, and call `deliver` to
/// start the observation:
///
/// ```swift
/// // @unchecked: its only stored property is an @Observed, guarded by the model's lock.
/// final class Thermometer: ObservableModel, @unchecked Sendable { @Observed var celsius = 20.0 }
/// let thermometer = Thermometer()
/// let token = thermometer.receptionist(for: \.celsius)
///     .deliver(on: DispatchQueue.main) { change in
///         print("\(change.newValue) °C")
///     }
/// ```
public struct ObservedProperty<Object: AnyObject & Sendable, Value: Sendable>: PipelineSource {
    @usableFromInline let object: Object
    @usableFromInline let keyPath: KeyPath<Object, Value> & Sendable
    @usableFromInline let registry: ModelRegistry
    @usableFromInline let storage: PropertyStorage<Value>
    @usableFromInline let options: ObservationOptions

    @usableFromInline
    init(
        object: Object,
        keyPath: KeyPath<Object, Value> & Sendable,
        registry: ModelRegistry,
        storage: PropertyStorage<Value>,
        options: ObservationOptions
    ) {
        self.object = object
        self.keyPath = keyPath
        self.registry = registry
        self.storage = storage
        self.options = options
    }

    /// Starts the observation: from now on, every change of the property enters the pipeline.
    @inlinable
    public func start<Output>(_ plan: PipelinePlan<ObservedChange<Object, Value>, Output>) -> ObservationToken {
        let observation = ObservationEngine<Object, Value>.start(plan, registry: registry, keyPath: keyPath)
        let wantsOld = options.contains(.old)
        let observer = ValueObserver<Value> { old, new, model, batch, lock in
            observation.append(
                ChangeRecord(old: wantsOld ? old : nil, new: new), model: model, batch: &batch, lock)
        }
        let (storage, object, wantsInitial) = (storage, object, options.contains(.initial))
        observation.watch([Watcher(storage, observer)]) { batch, lock in
            guard wantsInitial else { return }
            let initial = ChangeRecord(old: nil, new: storage.value(lock), isInitial: true)
            observation.append(initial, model: object, batch: &batch, lock)
        }
        return ObservationToken(observation)
    }
}

/// An observation of a property, before it starts: its pipeline has no stages yet.
public typealias PropertyObservation<Object: AnyObject & Sendable, Value: Sendable> =
    Pipeline<ObservedProperty<Object, Value>, ObservedChange<Object, Value>>
