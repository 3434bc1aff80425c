/// A property of an object, as the source of a ``Pipeline``: its changes are the pipeline's
/// elements.
///
/// Get the pipeline from ``ObservableModel/receptionist(for:options:)`` or
/// ``ObservableValue/receptionist(options:)``, add stages if you like, and call `deliver` to
/// start the observation:
///
/// ```swift
/// let token = thermometer.receptionist(for: \.celsius)
///     .deliver(on: DispatchQueue.main) { change in
///         label.text = "\(change.newValue!) °C"
///     }
/// ```
public struct ObservedProperty<Object: AnyObject & Sendable, Value: Sendable>: PipelineSource {

    @usableFromInline let object: Object
    @usableFromInline let keyPath: KeyPath<Object, Value> & Sendable
    @usableFromInline let storage: ObservableValue<Value>
    @usableFromInline let options: ObservationOptions

    @usableFromInline
    init(
        object: Object,
        keyPath: KeyPath<Object, Value> & Sendable,
        storage: ObservableValue<Value>,
        options: ObservationOptions
    ) {
        self.object = object
        self.keyPath = keyPath
        self.storage = storage
        self.options = options
    }

    /// Starts the observation: from now on, every change of the property enters the pipeline.
    @inlinable
    public func start<Output>(_ plan: PipelinePlan<ObservedChange<Object, Value>, Output>) -> ObservationToken {
        if let direct = plan.directDelivery {
            return attach(direct.makeCore())
        }
        return attach(StagedPipeline(plan))
    }

    /// Attaches `sink` to the property's storage: from now on every change is put into it.
    @inlinable
    func attach<Sink: ChangeSink>(_ sink: Sink) -> ObservationToken where Sink.Change == ObservedChange<Object, Value> {
        let observer = KeyPathObserver(sink: sink, keyPath: keyPath, options: options, storage: storage)
        storage.attach(observer.valueObserver, object: object)
        return ObservationToken(observer)
    }
}

/// An observation of a property, before it starts: its pipeline has no stages yet.
public typealias PropertyObservation<Object: AnyObject & Sendable, Value: Sendable> =
    Pipeline<ObservedProperty<Object, Value>, ObservedChange<Object, Value>>
