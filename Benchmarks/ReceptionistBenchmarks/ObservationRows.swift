// The rows of Observation support: what a write to an `@Observed` property costs once the property
// was read through its getter, which attaches it to the model's `ObservationRegistrar` (the
// registrar exists, nothing is tracked), and while `withObservationTracking` tracks it. Compare
// with "@Observed → DispatchQueue (lossless)", the same row with a property never read through its
// getter, which skips Observation.

import Dispatch
import Foundation
import Observation
import Receptionist

extension LibraryRows {
    /// ``observedLossless(_:)`` after one read of `model.left` through its getter: every write
    /// calls the registrar's `willSet` and `didSet`, which find nothing to notify.
    static func observedLosslessRead(_ spec: RunSpec) -> Measurement {
        let model = Pair()
        _ = model.left
        return observedLossless(model, spec)
    }

    /// ``observedLossless(_:)`` while `withObservationTracking { model.left }` tracks the
    /// property, its `onChange` re-arming the tracking on the writer's thread, as a view would
    /// on every change (SwiftUI re-arms later, on the main actor). Where Observation is not
    /// available, the same as ``observedLosslessRead(_:)``.
    ///
    /// Registered with one producer only. With two, a tracking re-armed on one writer's thread
    /// while the other writes is sometimes never removed from the registrar (its `onChange` is
    /// called again on every later write), so each write gets slower as the run goes on. That
    /// is Observation's own behaviour: a model written with `ObservationRegistrar.willSet`/`didSet`
    /// by hand shows it too.
    static func observedLosslessTracked(_ spec: RunSpec) -> Measurement {
        let model = Pair()
        _ = model.left
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) {
            TrackingChain(model).arm()
        }
        return observedLossless(model, spec)
    }

    private static func observedLossless(_ model: Pair, _ spec: RunSpec) -> Measurement {
        lossless(
            spec, write: { model.left = $0 }, read: { model.left },
            observe: { target, consumer in
                model.receptionist(for: \.left)
                    .deliver(on: target) { change in
                        consumer.receive(old: change.oldValue!, new: change.newValue, changes: change.coalescedCount)
                    }
            })
    }
}

/// `withObservationTracking { model.left }`, re-armed by each `onChange`. Each arming re-arms
/// once, so that a handler Observation might call from two writers at once cannot fork the chain.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
private final class TrackingChain: @unchecked Sendable {
    // @unchecked: `armed` is guarded by `lock`; `model` is Sendable.
    private let model: Pair
    private let lock = NSLock()
    private var armed = 0

    init(_ model: Pair) {
        self.model = model
    }

    func arm() {
        arm(generation: lock.withLock { armed })
    }

    private func arm(generation: Int) {
        withObservationTracking {
            _ = model.left
        } onChange: {
            let next: Int? = self.lock.withLock {
                guard self.armed == generation else { return nil }
                self.armed += 1
                return self.armed
            }
            if let next { self.arm(generation: next) }
        }
    }
}
