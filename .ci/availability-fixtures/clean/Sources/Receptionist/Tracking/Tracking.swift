import Observation

// Words in comments are not uses: withObservationTracking, Mutex, Observations { } }
/* Nor in /* nested */ block comments: Observable { */

/// Tracks `read` with `withObservationTracking`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@discardableResult
func track(_ read: () -> Int) -> Int {
    withObservationTracking { read() } onChange: {}
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@Observable
final class TrackedModel {
    var value = 0
    @ObservationIgnored var scratch = 0
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
extension TrackedModel {
    func trackedValue() -> Int {
        withObservationTracking { value } onChange: {}
    }
}

func maybeTrack(_ read: () -> Int) -> Int {
    let text = "{ not a brace \(read()) Mutex }"
    if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) {
        return withObservationTracking { read() } onChange: {} + text.count
    } else {
        return read()
    }
}

func trackOrFallback(_ read: () -> Int) -> Int {
    guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else {
        return read()
    }
    let message = """
        a multi-line string with { braces and withObservationTracking
        \(read()) and "quotes" }
        """
    _ = message
    return withObservationTracking { read() } onChange: {} + TrackedModel().trackedValue()
}

func latest(_ model: some AnyObject & Sendable) async {
    if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
        for await _ in Observations({ 1 }) { break }
    }
}

func onlyWhereUnavailable() {
    if #unavailable(macOS 14, iOS 17, tvOS 17, watchOS 10) {
        print("old")
    } else {
        _ = withObservationTracking({ 1 }, onChange: {})
    }
}

@available(*, unavailable, message: "never built")
func neverBuilt() {
    _ = Mutex(0)
}

@available(macOS, introduced: 15)
@available(iOS, introduced: 18)
@available(tvOS, introduced: 18)
@available(watchOS, introduced: 11)
@available(visionOS, introduced: 2)
func longForm() {
    let lock = Mutex(0)
    lock.withLock { $0 += 1 }
}

#if DEBUG
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
func debugOnly() -> Int { track { 1 } }
#endif

#if os(Linux)
let ungatedOnLinux = withObservationTracking({ 1 }, onChange: {})
#endif

/// Our own `next(isolation:)`: calling it needs nothing, but the name is the table's.
struct Ticker {
    func next(isolation actor: isolated (any Actor)?) async -> Int? { nil }
}

func tick(_ ticker: Ticker) async -> Int? {
    await ticker.next(isolation: nil)  // check-apple-availability: ignore -- Ticker's own method
}
