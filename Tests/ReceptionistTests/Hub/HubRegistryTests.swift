import Testing

@testable import Receptionist

/// The registry is a plain value: these tests drive it without threads.
@Suite struct HubRegistryTests {
    final class Stub: HubSubscriber {
        let name: String
        init(_ name: String) { self.name = name }
        func cancel() {}
        func flush() {}
        func finish() {}
        func finish(completion: @escaping @Sendable () -> Void) {}
        var isCancelled: Bool { false }
        var isFinished: Bool { false }
        var isFinishing: Bool { false }
        var statistics: ReceptionistStatistics { ReceptionistStatistics() }
        var writability: Writability { .writable }
        func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {}
        func onWritabilityChange(
            on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
        ) -> WritabilityListener {
            WritabilityListener(on: target, handler)
        }
    }

    let first = Hub.Channel<Int>("first").key
    let second = Hub.Channel<Int>("second").key

    static func names(_ entries: [HubRegistry.Entry]) -> [String] {
        entries.map { ($0.subscriber as! Stub).name }
    }

    @Test func keepsEachChannelsSubscribersInRegistrationOrder() {
        var registry = HubRegistry()
        let a = registry.add(Stub("a"), to: first)
        let b = registry.add(Stub("b"), to: second)
        let c = registry.add(Stub("c"), to: first)
        #expect(a < b && b < c)
        #expect(Self.names(registry.subscribers(of: first)) == ["a", "c"])
        #expect(Self.names(registry.subscribers(of: second)) == ["b"])
        #expect(registry.count(of: first) == 2)
        #expect(registry.channelCount == 2)
    }

    @Test func removingFromTheMiddleKeepsTheOrderOfTheOthers() {
        var registry = HubRegistry()
        let ids = ["a", "b", "c", "d", "e"].map { registry.add(Stub($0), to: first) }
        #expect((registry.remove(ids[2], from: first) as? Stub)?.name == "c")
        #expect((registry.remove(ids[0], from: first) as? Stub)?.name == "a")
        #expect(Self.names(registry.subscribers(of: first)) == ["b", "d", "e"])
        let f = registry.add(Stub("f"), to: first)
        #expect(Self.names(registry.subscribers(of: first)) == ["b", "d", "e", "f"])
        #expect((registry.remove(f, from: first) as? Stub)?.name == "f")
        #expect((registry.remove(ids[4], from: first) as? Stub)?.name == "e")
        #expect(Self.names(registry.subscribers(of: first)) == ["b", "d"])
    }

    @Test func removingTwiceOrFromAnotherChannelFindsNothing() {
        var registry = HubRegistry()
        let a = registry.add(Stub("a"), to: first)
        _ = registry.add(Stub("b"), to: first)
        #expect(registry.remove(a, from: second) == nil)
        #expect(registry.remove(a, from: first) != nil)
        #expect(registry.remove(a, from: first) == nil)
        #expect(registry.remove(12_345, from: first) == nil)
        #expect(Self.names(registry.subscribers(of: first)) == ["b"])
    }

    @Test func aChannelWithoutSubscribersLeavesNoTrace() {
        var registry = HubRegistry()
        let a = registry.add(Stub("a"), to: first)
        let b = registry.add(Stub("b"), to: first)
        _ = registry.remove(b, from: first)
        _ = registry.remove(a, from: first)
        #expect(registry.channelCount == 0)
        #expect(registry.subscribers(of: first).isEmpty)
        #expect(registry.count(of: first) == 0)
    }

    @Test func aSnapshotIsUnaffectedByLaterChanges() {
        var registry = HubRegistry()
        let a = registry.add(Stub("a"), to: first)
        _ = registry.add(Stub("b"), to: first)
        let snapshot = registry.subscribers(of: first)
        _ = registry.remove(a, from: first)
        _ = registry.add(Stub("c"), to: first)
        #expect(Self.names(snapshot) == ["a", "b"])
        #expect(Self.names(registry.subscribers(of: first)) == ["b", "c"])
    }

    @Test func theSameNameWithAnotherPayloadTypeIsAnotherChannel() {
        var registry = HubRegistry()
        let ints = Hub.Channel<Int>("value").key
        let strings = Hub.Channel<String>("value").key
        #expect(ints != strings)
        #expect(Hub.Channel<Int>("value").key == ints)
        _ = registry.add(Stub("int"), to: ints)
        _ = registry.add(Stub("string"), to: strings)
        #expect(Self.names(registry.subscribers(of: ints)) == ["int"])
        #expect(Self.names(registry.subscribers(of: strings)) == ["string"])
    }
}
