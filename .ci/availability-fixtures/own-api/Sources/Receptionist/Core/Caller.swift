func ungated() -> Int {
    startTrackingChanges()
}

func gated() -> Int {
    if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) {
        return startTrackingChanges() + [1].trackedCount
    }
    return 0
}

func labelOnly(configure: (Bool) -> Void) {
    configure(startTrackingChanges: true)
    overloaded(1)
}

let total = [1, 2].trackedCount

func session() -> TrackingSession? { nil }

func run(trackingHook: () -> Void) {
    trackingHook()
    session()?.refreshCaches()  // private in Gated.swift: not this name
}
