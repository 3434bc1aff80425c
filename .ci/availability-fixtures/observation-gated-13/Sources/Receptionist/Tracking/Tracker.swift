import Observation

/// Reads through `withObservationTracking`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@discardableResult
func track(_ read: () -> Int) -> Int {
    withObservationTracking {
        read()
    } onChange: {
        print("changed")
    }
}

@available(macOS 14, *)
func trackOnMacOnly(_ read: () -> Int) -> Int {
    withObservationTracking(read, onChange: {})
}
