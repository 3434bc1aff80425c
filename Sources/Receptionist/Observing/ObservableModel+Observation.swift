#if canImport(Observation)
import Observation
#endif

// SwiftUI and Observation see `@Observed` properties: ObservableModel and ObservableValue are
// `Observable`, and their properties call an `ObservationRegistrar`, which is created lazily.
// The rule and its cost are documented on ObservableModel ("SwiftUI and Observation").
//
// Observation needs macOS 14 / iOS 17 / tvOS 17 / watchOS 10 / visionOS 1, later than the
// library's floor: every use of its API is in a declaration marked with that availability or
// inside `if #available`, and what the always-available types store is type-erased
// (`ObservationNotifier`, the registrar's box as `AnyObject`).

#if canImport(Observation)
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension ObservableModel: Observable {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension ObservableValue: Observable {}
#endif

/// Tells Observation that one property of one model is read or changes: the model's
/// `ObservationRegistrar` and the property's key path, type-erased so that always-available
/// storage (``AnyPropertyStorage``) can hold it.
///
/// Its methods run Observation's code, and `willSet` runs the `onChange` handlers of
/// `withObservationTracking`: never call them under the model's lock.
@usableFromInline
protocol ObservationNotifier: AnyObject, Sendable {
    /// `model` (the model that owns the property) read the property.
    func access(_ model: AnyObject)
    /// The property of `model` is about to change.
    func willSet(_ model: AnyObject)
    /// The property of `model` changed.
    func didSet(_ model: AnyObject)
}

#if canImport(Observation)
/// The model's registrar, in a box that always-available state can hold as an `AnyObject`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
private final class RegistrarBox: Sendable {
    let registrar = ObservationRegistrar()
}

/// The registrar of a model and the key path of one of its properties.
///
/// `@unchecked Sendable` (below): the key path is immutable and only passed to the registrar, which
/// hashes and compares it (see ``KnownStorage``); the registrar is `Sendable`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
private final class PropertyRegistration<Model: Observable & AnyObject, Value>: ObservationNotifier {
    let registrar: ObservationRegistrar
    let keyPath: KeyPath<Model, Value>

    init(registrar: ObservationRegistrar, keyPath: KeyPath<Model, Value>) {
        self.registrar = registrar
        self.keyPath = keyPath
    }

    // `as!`: a storage belongs to one model, whose class is `Model` or a subclass (the class
    // that declares the property); the notifier is only ever given that model. Checked: next to
    // the registrar's own work (a lock, hashing the key path) the cast costs nothing measurable.

    func access(_ model: AnyObject) {
        registrar.access(model as! Model, keyPath: keyPath)
    }

    func willSet(_ model: AnyObject) {
        registrar.willSet(model as! Model, keyPath: keyPath)
    }

    func didSet(_ model: AnyObject) {
        registrar.didSet(model as! Model, keyPath: keyPath)
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
// Unsafe: the key path is immutable, only hashed and compared (test: ObservationConformanceTests)
extension PropertyRegistration: @unchecked Sendable {}
#endif

extension ModelRegistry {
    /// The first read of an `@Observed` property through its getter (its storage has no notifier
    /// yet): makes the model's registrar if there is none and the property's notifier, then
    /// tells Observation of the read. Nothing where Observation is not available, and nothing
    /// for the read through which a receptionist finds the property's storage.
    ///
    /// The getter read the value in an earlier critical section: a write between the two finds
    /// no notifier and tells Observation nothing. Nothing is lost by it that a notifier would
    /// have saved: `withObservationTracking` (and `Observations`, built on it) starts tracking only
    /// once the tracked closure returned, so a write between the closure's read and that moment
    /// is never reported, with a notifier or without, as for any `@Observable` class.
    @usableFromInline
    func beginObservation<Model: ObservableModel, Value>(
        of storage: PropertyStorage<Value>,
        in model: Model,
        keyPath: KeyPath<Model, Value>
    ) {
        #if canImport(Observation)
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) {
            // The receptionist's own read (ObservedPropertyCapture) is not a read by the user.
            guard ObservedPropertyCapture.slot == nil else { return }
            notifier(for: storage, of: model, keyPath: keyPath).access(model)
        }
        #endif
    }

    /// The first read of an ``ObservableValue``'s `value` through its getter: see
    /// ``beginObservation(of:in:keyPath:)``.
    @usableFromInline
    func beginObservation<Value>(of box: ObservableValue<Value>) {
        #if canImport(Observation)
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) {
            notifier(for: box.storage, of: box, keyPath: \.value).access(box)
        }
        #endif
    }

    #if canImport(Observation)
    /// The notifier of the property behind `storage`, made (with the model's registrar, if it
    /// has none yet) under the model's lock the first time; it calls no user code.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    private func notifier<Model: Observable & AnyObject, Value>(
        for storage: PropertyStorage<Value>,
        of model: Model,
        keyPath: KeyPath<Model, Value>
    ) -> any ObservationNotifier {
        withLock { lock, state in
            if let notifier = storage.observationNotifier(lock) { return notifier }
            let box: RegistrarBox
            if let existing = state.observationRegistrar as? RegistrarBox {
                box = existing
            } else {
                box = RegistrarBox()
                state.observationRegistrar = box
            }
            let notifier = PropertyRegistration(registrar: box.registrar, keyPath: keyPath)
            storage.setObservationNotifier(notifier, lock)
            return notifier
        }
    }
    #endif
}
