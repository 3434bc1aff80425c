/// Several `@Observed` properties of one model, observed together as the source of a
/// ``Pipeline``: every change is a snapshot of all of them that the model really had.
///
/// Get the pipeline from ``ObservableModelProtocol/receptionist(for:_:options:)`` (or the
/// three-property form), add stages if you like, and call `deliver` to start it.
///
/// The delivered ``ObservedChange`` has the properties' values as a tuple, in the order of the
/// key paths, and a key path (``ObservedChange/keyPath``) that reads the same tuple from the model
/// under the model's lock.
public struct ObservedSnapshot<Object: ObservableModelProtocol, Value: Sendable>: PipelineSource {
    @usableFromInline let object: Object
    @usableFromInline let registry: ModelRegistry
    @usableFromInline let key: SnapshotKey<Object, Value>
    @usableFromInline let options: ObservationOptions

    @usableFromInline
    init(object: Object, registry: ModelRegistry, key: SnapshotKey<Object, Value>, options: ObservationOptions) {
        self.object = object
        self.registry = registry
        self.key = key
        self.options = options
    }

    /// Starts the observation: from now on, every write to one of the properties (or every
    /// ``ObservableModelProtocol/update(_:)`` that writes some of them) enters the pipeline as
    /// one snapshot.
    @inlinable
    public func start<Output>(_ plan: PipelinePlan<ObservedChange<Object, Value>, Output>) -> ObservationToken {
        let observation = ObservationEngine<Object, Value>.start(
            plan, registry: registry, keyPath: key.keyPath, writesFeedStages: false)
        let trigger = SnapshotTrigger(read: key.read, observation: observation, options: options)
        let (object, initial) = (object, options.contains(.initial))
        observation.watch(key.watchers(trigger)) { batch, lock in
            trigger.begin(initial: initial, model: object, batch: &batch, lock)
        }
        return ObservationToken(observation)
    }
}

/// An observation of several properties, before it starts: its pipeline has no stages yet.
public typealias SnapshotObservation<Object: ObservableModelProtocol, Value: Sendable> =
    Pipeline<ObservedSnapshot<Object, Value>, ObservedChange<Object, Value>>

/// What a snapshot observation reads, and how it registers on its properties. Hashable by its key
/// paths, so that it can form the snapshot's own key path.
@usableFromInline
struct SnapshotKey<Root: ObservableModelProtocol, Value: Sendable>: Hashable, Sendable {
    @usableFromInline let paths: [AnyKeyPath & Sendable]
    /// Reads every property of the snapshot, under the model's lock.
    @usableFromInline let read: @Sendable (borrowing ModelLock) -> Value
    /// The observers a trigger registers, one per property.
    @usableFromInline let watchers: @Sendable (SnapshotTrigger<Root, Value>) -> [Watcher]

    @usableFromInline
    init(
        paths: [AnyKeyPath & Sendable],
        read: @escaping @Sendable (borrowing ModelLock) -> Value,
        watchers: @escaping @Sendable (SnapshotTrigger<Root, Value>) -> [Watcher]
    ) {
        self.paths = paths
        self.read = read
        self.watchers = watchers
    }

    /// The snapshot as a key path of the model: reading it reads every property under the
    /// model's lock.
    @usableFromInline
    var keyPath: KeyPath<Root, Value> & Sendable {
        \Root.[snapshot: self]
    }

    @usableFromInline
    static func == (lhs: SnapshotKey, rhs: SnapshotKey) -> Bool {
        lhs.paths.map { $0 as AnyKeyPath } == rhs.paths.map { $0 as AnyKeyPath }
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        for path in paths { hasher.combine(path as AnyKeyPath) }
    }
}

extension ObservableModelProtocol {
    /// The properties of a snapshot, read together under the model's lock (the component of a
    /// snapshot's key path).
    subscript<Value>(snapshot key: SnapshotKey<Self, Value>) -> Value {
        registry.withLock { lock, _ in key.read(lock) }
    }

    /// Describes an observation of two `@Observed` properties together: each delivered change
    /// holds both values as they were at one moment, a state the model really had, never a
    /// torn combination of one property's old value and the other's new one.
    ///
    /// ```swift
    /// let download = Download()  // see ObservableModel
    /// let token = download.receptionist(for: \.progress, \.status)
    ///     .deliver(on: .mainActor) { change in
    ///         let (progress, status) = change.newValue
    ///         print(progress, status)
    ///     }
    /// ```
    ///
    /// A write to either property is one change; ``update(_:)`` writing both is one change.
    /// Changes form a chain: each `oldValue` is the previous `newValue`, the last `newValue` is
    /// the final state. Every other promise is that of a single property's observation (see
    /// ``receptionist(for:options:)``).
    ///
    /// - Parameters:
    ///   - first: a key path to an `@Observed` stored property declared in this class.
    ///   - second: another one. A key path that is not an `@Observed` property of this model, or
    ///     the same property twice, stops the program with a message naming the parameter.
    ///   - options: what each change reports besides its new snapshot: by default `[.old]`, the
    ///     snapshot before the change too; add ``ObservationOptions/initial`` to get the current
    ///     snapshot on registration.
    @inlinable  // the trigger's per-write code is specialised for the model and the values
    public func receptionist<A: Sendable, B: Sendable>(
        for first: KeyPath<Self, A> & Sendable,
        _ second: KeyPath<Self, B> & Sendable,
        options: ObservationOptions = [.old]
    ) -> SnapshotObservation<Self, (A, B)> {
        let function = "receptionist(for:_:options:)"
        let a = observedStorage(for: first, in: function, parameter: "first")
        let b = observedStorage(for: second, in: function, parameter: "second")
        validateDistinct([a, b], in: function, parameters: ["first", "second"])
        let key = SnapshotKey<Self, (A, B)>(
            paths: [first, second],
            read: { lock in (a.value(lock), b.value(lock)) },
            watchers: { trigger in [Watcher(a, trigger.observer()), Watcher(b, trigger.observer())] }
        )
        return Pipeline(source: ObservedSnapshot(object: self, registry: registry, key: key, options: options))
    }

    /// Describes an observation of three `@Observed` properties together; see
    /// ``receptionist(for:_:options:)``.
    @inlinable  // the trigger's per-write code is specialised for the model and the values
    public func receptionist<A: Sendable, B: Sendable, C: Sendable>(
        for first: KeyPath<Self, A> & Sendable,
        _ second: KeyPath<Self, B> & Sendable,
        _ third: KeyPath<Self, C> & Sendable,
        options: ObservationOptions = [.old]
    ) -> SnapshotObservation<Self, (A, B, C)> {
        let function = "receptionist(for:_:_:options:)"
        let a = observedStorage(for: first, in: function, parameter: "first")
        let b = observedStorage(for: second, in: function, parameter: "second")
        let c = observedStorage(for: third, in: function, parameter: "third")
        validateDistinct([a, b, c], in: function, parameters: ["first", "second", "third"])
        let key = SnapshotKey<Self, (A, B, C)>(
            paths: [first, second, third],
            read: { lock in (a.value(lock), b.value(lock), c.value(lock)) },
            watchers: { trigger in
                [Watcher(a, trigger.observer()), Watcher(b, trigger.observer()), Watcher(c, trigger.observer())]
            }
        )
        return Pipeline(source: ObservedSnapshot(object: self, registry: registry, key: key, options: options))
    }

    /// Stops the program if two of `storages` are the same property.
    @usableFromInline
    func validateDistinct(_ storages: [AnyObject], in function: String, parameters: [String]) {
        for later in storages.indices {
            for earlier in storages.indices where earlier < later {
                validate(
                    storages[earlier] !== storages[later],
                    "\(function) \(parameters[later]) names the same property as \(parameters[earlier])"
                )
            }
        }
    }
}
