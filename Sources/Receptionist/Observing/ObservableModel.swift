/// The base class of a model whose `@Observed` properties can be observed by key path, alone or
/// several together, and written together.
///
/// ```swift
/// final class Download: ObservableModel, @unchecked Sendable {
///     // @unchecked: every stored property is an @Observed (see "Sendable" below).
///     @Observed var progress = 0.0
///     @Observed var status = "waiting"
/// }
///
/// let download = Download()
/// let token = download.receptionist(for: \.progress, \.status)      // a consistent snapshot
///     .deliver(on: .mainActor) { change in
///         let (progress, status) = change.newValue
///         print(progress, status)
///     }
/// download.progress = 0.5                                   // any thread
/// download.$progress.update { $0 += 0.1 }                   // atomic read-modify-write
/// download.update { $0.progress = 1; $0.status = "done" }   // one atomic change of both
/// ```
///
/// ## One lock per model
/// All the `@Observed` properties of a model share one lock, which also guards the buffers of
/// their observations. So:
/// - a write takes one lock to store the value and to append the change for every observation
///   of the property; every observation sees the writes in the order they were applied;
/// - ``ObservableModelProtocol/update(_:)`` writes several properties as one atomic change;
/// - an observation of several properties
///   (``ObservableModelProtocol/receptionist(for:_:options:)``) delivers only states the model
///   really had: never a torn combination of an old value of one property and a new value of
///   another.
///
/// Writes to different properties of one model contend for that lock; models do not.
///
/// ## Lifetime
/// An observation does not keep its model alive; changes waiting for delivery do. When the model
/// is deallocated, its observations deliver what is pending and finish.
///
/// ## SwiftUI and Observation
/// Where Observation is available (macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1), the
/// model is `Observable`: `withObservationTracking`, SwiftUI views and `Observations` react to
/// its `@Observed` properties as to those of an `@Observable` class (do not also apply the
/// `@Observable` macro). Receptionists are unaffected: each still gets every change, in order.
/// For a model that background threads write, let the view read a main-actor state that a
/// coalesced receptionist feeds instead: see <doc:ObservationWithBackgroundWriters>.
/// - **Reads.** A read through the property (`model.progress`) reports an access to the model's
///   `ObservationRegistrar` after the value is read, outside the lock (tracking starts only when
///   the closure given to `withObservationTracking` returns, so the order does not matter).
///   Other reads are not reported: `$progress.value`, a transaction's reads, and what a
///   receptionist reads.
/// - **Writes.** `model.progress = 0.5`, `$progress.update { … }` and
///   ``ObservableModelProtocol/update(_:)`` call the registrar's `willSet` before the write is
///   applied and its `didSet` after it, on the writing thread, with none of the library's locks
///   held. So the `onChange` handler of `withObservationTracking` runs synchronously on the
///   writer's thread, before the new value is stored (it reads the old value), and may read or
///   write the model. A transaction sends one `willSet` for each property it writes before its
///   writes are applied together, and the `didSet`s once they are; an update that runs its
///   closure again because of a concurrent write sends each only once.
/// - **Cost: the registrar is created lazily.** A property that was never read through its
///   getter skips Observation entirely: its writes cost what they cost without it. The first
///   read of a property through its getter (from any code, tracked or not: the library cannot
///   tell) creates the model's registrar if needed and attaches the property to it; from then
///   on, every write to that property pays for Observation even when nothing tracks it: a
///   second acquisition of the model's lock, and the registrar's `willSet` and `didSet`, which
///   take the registrar's lock and hash the key path. Such a write costs several times what it
///   cost before the first read, with or without receptionists (the "read once (registrar,
///   untracked)" rows of Benchmarks/README.md, "Synchronisation paths"), and every read through
///   the getter pays the registrar's `access`, which more than doubles its cost. The model's
///   other properties keep the cheaper path until they are read through their getters:
///   a property written from a hot loop and read only by receptionists, transactions or
///   `$property.value` never pays.
///
/// ## Sendable
/// The storage of an `@Observed` property is a `var` the compiler synthesises, so the compiler
/// cannot prove a model `Sendable`, and a subclass of a non-final class must restate the
/// conformance anyway: declare the model `@unchecked Sendable`. That is sound as long as every
/// stored property is an `@Observed` (a reference to storage guarded by the model's lock, never
/// reassigned) or a `let` of a `Sendable` type.
///
/// To keep a class checked `Sendable` by the compiler, or to inherit from another class, hold the
/// state in ``ObservableValue`` boxes instead (`let progress = ObservableValue(0.0)`), and keep
/// what must change together in one box of a struct: each box has a lock of its own.
open class ObservableModel: @unchecked Sendable {  // Unsafe: non-final (test: ObservableModelTests)
    // @unchecked: a non-final class cannot be checked Sendable; this one holds only its
    // registry, which is Sendable.

    /// The model's lock and its observations.
    @usableFromInline
    let registry = ModelRegistry()

    /// Creates the model.
    public init() {}

    deinit {
        registry.modelDidEnd()
    }
}

/// The API of every ``ObservableModel`` that names the model's own type: observations by key
/// path and atomic updates. You do not conform to it: every subclass of ``ObservableModel`` does.
public protocol ObservableModelProtocol: ObservableModel {}

extension ObservableModel: ObservableModelProtocol {}

extension ObservableModelProtocol {
    /// Describes an observation of the `@Observed` property at `keyPath`; call
    /// ``Pipeline/deliver(on:buffering:_:)-(DeliveryTarget,_,_)`` on the result to start it.
    ///
    /// - Parameters:
    ///   - keyPath: a key path to an `@Observed` stored property declared in this class, such as
    ///     `\.progress`. Anything else (a computed property, a plain stored property, a path
    ///     through another object) stops the program with a message naming the key path. A
    ///     property inherited from a superclass is observed through the class that declares it:
    ///     `(download as BaseDownload).receptionist(for: \.progress)`.
    ///   - options: what each change reports besides its new value: by default `[.old]`, the
    ///     value before the change too; add ``ObservationOptions/initial`` to get the current
    ///     value on registration.
    public func receptionist<Value: Sendable>(
        for keyPath: KeyPath<Self, Value> & Sendable,
        options: ObservationOptions = [.old]
    ) -> PropertyObservation<Self, Value> {
        let storage = observedStorage(for: keyPath, in: "receptionist(for:options:)", parameter: "keyPath")
        return Pipeline(
            source: ObservedProperty(
                object: self, keyPath: keyPath, registry: registry, storage: storage, options: options)
        )
    }

    /// The storage of the `@Observed` property at `keyPath`; stops the program with a message
    /// naming `function` and `parameter` if there is none.
    ///
    /// Inlinable, so that the lookup through this very key path object (every transaction's, for
    /// each property it touches) runs specialised; the rest is ``registeredStorage(for:in:parameter:)``.
    @inlinable
    func observedStorage<Value: Sendable>(
        for keyPath: KeyPath<Self, Value>,
        in function: @autoclosure () -> String,
        parameter: @autoclosure () -> String
    ) -> PropertyStorage<Value> {
        // A node is only ever recorded for a key path equal to the one that found its storage:
        // the value type is `Value`.
        if let known = registry.knownStorage(for: keyPath) {
            // Unsafe: the node was recorded for this key path, of type Value (row: "update { 2 properties }")
            return unsafeDowncast(known, to: PropertyStorage<Value>.self)
        }
        return registeredStorage(for: keyPath, in: function(), parameter: parameter())
    }

    /// ``observedStorage(for:in:parameter:)`` for a key path object not looked up before: finds
    /// the storage through an equal key path, or else through the property itself, and records
    /// it for `keyPath`.
    @usableFromInline
    func registeredStorage<Value: Sendable>(
        for keyPath: KeyPath<Self, Value>,
        in function: String,
        parameter: String
    ) -> PropertyStorage<Value> {
        let key = SendableKeyPath(keyPath: keyPath)
        if let equal = registry.equalKnownStorage(for: key) {
            // Unsafe: as above: an equal key path names the same storage (test: ModelTransactionTests)
            return unsafeDowncast(equal, to: PropertyStorage<Value>.self)
        }
        guard let storage = ObservedPropertyCapture.storage(for: keyPath, of: self) else {
            invalidConfiguration(
                "\(function) \(parameter) \(keyPath) is not an @Observed stored property "
                    + "declared in \(Self.self). Declare it `@Observed var`; observe an inherited property "
                    + "through the superclass that declares it; observe an ObservableValue box with "
                    + "box.receptionist()."
            )
        }
        registry.record(storage, for: key)
        return storage
    }
}
