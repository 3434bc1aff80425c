import Observation

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension Receptionist {
    /// Describes a tracking of a property of an `@Observable` model used on the main actor; call
    /// `deliver(on: .mainActor)` on the result to start it.
    ///
    /// ```swift
    /// @MainActor @Observable final class Counter { var count = 0 }
    ///
    /// let counter = Counter()  // on the main actor
    /// let token = Receptionist.tracking(\.count, of: counter, options: .initial)
    ///     .deliver(on: .mainActor) { count in print(count) }
    /// ```
    ///
    /// Use it for a model isolated to the main actor, or for any `@Observable` model that is only
    /// used on the main actor (it need not be `Sendable`): the property is read, and the task
    /// block runs, on the main actor. Key paths to main-actor-isolated properties are not
    /// `Sendable`, which is why this overload exists. See ``MainActorTrackedProperty``.
    ///
    /// - Parameters:
    ///   - keyPath: the property to read, such as `\.count`: a stored property of an
    ///     `@Observable` class, or a computed property that reads some. A property that
    ///     Observation does not track can never be reported as changed: the tracking then
    ///     delivers the initial value (with `.initial`) and finishes.
    ///   - model: the model. The tracking does not keep it alive.
    ///   - options: ``ObservationOptions/initial`` to deliver the current value first. The other
    ///     options do not apply.
    @MainActor
    public static func tracking<Model: Observable & AnyObject>(
        _ keyPath: KeyPath<Model, Event>,
        of model: Model,
        options: ObservationOptions = []
    ) -> MainActorTrackedProperty<Model, Event> {
        MainActorTrackedProperty(model: model, keyPath: keyPath, options: options)
    }
}

/// A property of an `@Observable` model used on the main actor, tracked with
/// `withObservationTracking`; `deliver(on: .mainActor)` starts the tracking.
///
/// Get one from ``Receptionist/tracking(_:of:options:)->MainActorTrackedProperty<Model,Event>``, on the main
/// actor.
///
/// It delivers as ``TrackedProperty`` does: each report of a change is bounced to the main
/// queue, where the property is read and the task block runs with the value. So the task block
/// sees the latest value (values set in quick succession may be skipped, the last one is always
/// delivered), possibly the same value twice; ``ObservableValue`` and `@Observed` properties are
/// the lossless alternative.
///
/// ## Threading contract
/// - The property is read, and the task block runs, on the main actor, one value at a time.
/// - The model's writes are made on the main actor too, so a read never runs in the middle of a
///   write: the read bounced for a write runs after the main actor finished what it was doing,
///   write included. The task block may write the model itself; the change is delivered after
///   it returns.
/// - Cancel, finish, lifetime and statistics are as for ``TrackedProperty``: cancel stops the
///   tracking at once, the model is not kept alive, and its deallocation finishes the tracking.
@MainActor
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public struct MainActorTrackedProperty<Model: Observable & AnyObject, Value: Sendable> {
    let model: Model
    let keyPath: KeyPath<Model, Value>
    let options: ObservationOptions

    /// Starts the tracking: each time the property changes, `task` runs on the main actor with
    /// the value read there. See ``MainActorTrackedProperty`` for the contract.
    ///
    /// Without ``ObservationOptions/initial``, the tracking is armed before this call returns:
    /// every write made after it returns is reported.
    ///
    /// - Parameters:
    ///   - target: ``MainActorTarget/mainActor``.
    ///   - task: the task block.
    /// - Returns: the token that keeps the tracking alive; keep it as long as you want values.
    public func deliver(on target: MainActorTarget, _ task: @escaping @MainActor (Value) -> Void) -> ObservationToken {
        let reader = MainActorTrackingReader(model: model, keyPath: keyPath, link: TrackingLink(), task: task)
        let core = ReceptionistCore<TrackingRead>(.mainActor { _ in reader.readAndDeliver() })
        reader.link.connect(core)
        if options.contains(.initial) {
            core.send(TrackingRead())
        } else if !reader.arm() {
            core.finish()  // nothing can ever be reported
        }
        return ObservationToken(TrackingHandle(core))
    }
}
