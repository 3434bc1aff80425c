import Testing

@testable import Receptionist

@Suite struct TrackingTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func tracks() {
        #expect(track { 1 } == 1)
    }

    @Test func tracksWhereAvailable() throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }
        #expect(TrackedModel().trackedValue() == 0)
    }
}
