import Observation

@testable import Receptionist

/// A `Sendable` `@Observable` model written the way ``TrackedProperty`` asks: each write reports
/// itself (`withMutation`) and stores the value under the lock its getter reads under.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@Observable final class TrackingCounter: Sendable {
    struct State {
        var count: Int
        var bonus = 0
    }

    @ObservationIgnored private let state: Locked<State>
    let constant = 7
    let lifetime: LifetimeWitness?

    init(_ count: Int = 0, lifetime: LifetimeWitness? = nil) {
        state = Locked(uncounted: State(count: count))
        self.lifetime = lifetime
    }

    var count: Int {
        get {
            access(keyPath: \.count)
            return state.withLock { $0.count }
        }
        set {
            state.withLock { state in withMutation(keyPath: \.count) { state.count = newValue } }
        }
    }

    var bonus: Int {
        get {
            access(keyPath: \.bonus)
            return state.withLock { $0.bonus }
        }
        set {
            state.withLock { state in withMutation(keyPath: \.bonus) { state.bonus = newValue } }
        }
    }

    /// A computed property that reads two tracked ones.
    var total: Int { count + bonus }

    /// Adds one, atomically; returns the new count.
    @discardableResult
    func increment() -> Int {
        state.withLock { state in
            withMutation(keyPath: \.count) {
                state.count += 1
                return state.count
            }
        }
    }
}

/// A `Sendable` `@Observable` model that reports a write *outside* the lock it stores under, with a
/// hook that runs between the report and the store: the window ``TrackedProperty`` documents.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@Observable final class LooselyLockedTrackingCounter: Sendable {
    @ObservationIgnored private let state = Locked(uncounted: 0)
    @ObservationIgnored private let hook = Locked<(@Sendable () -> Void)?>(uncounted: nil)

    /// Runs `body` inside each write, after it was reported and before it is stored.
    func betweenReportAndStore(_ body: (@Sendable () -> Void)?) {
        hook.withLock { $0 = body }
    }

    var count: Int {
        get {
            access(keyPath: \.count)
            return state.withLock { $0 }
        }
        set {
            withMutation(keyPath: \.count) {
                hook.withLock { $0 }?()
                state.withLock { $0 = newValue }
            }
        }
    }
}

/// A model isolated to the main actor, as the macro writes it.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor @Observable final class MainActorTrackingCounter {
    var count = 0
    let lifetime: LifetimeWitness?

    init(lifetime: LifetimeWitness? = nil) {
        self.lifetime = lifetime
    }
}

/// A model that is not `Sendable`, used only on the main actor.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@Observable final class PlainTrackingCounter {
    var count = 0
}

/// What a main-actor task block saw.
@MainActor final class MainActorTrackingRecorder<Value> {
    var values: [Value] = []
}
