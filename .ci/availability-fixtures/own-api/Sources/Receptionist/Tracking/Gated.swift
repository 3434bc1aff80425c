/// Starts tracking; needs Observation.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public func startTrackingChanges() -> Int {
    1
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension Array {
    public var trackedCount: Int { count }
    func value() -> Int { 0 }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
public struct TrackingSession {
    public func pause() {}
}

/// Declared both gated and ungated: not checked (indistinguishable lexically).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
func overloaded(_ x: Int) {}
func overloaded(_ x: String) {}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension TrackingSession {
    /// Private: other files cannot call it, a same-named thing there is something else.
    private func refreshCaches() {}
    func trackingHook() {}
    fileprivate func usedHereOnly() { refreshCaches() }
}

func alsoHere() {
    TrackingSession().usedHereOnly()
}
