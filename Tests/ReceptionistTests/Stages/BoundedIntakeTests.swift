import Testing

@testable import Receptionist

/// A dropping policy bounds memory end to end, also with stages in front of the delivery buffer
/// (found in review: filter + dropOldest(64) grew by hundreds of MB, the stages' intake queueing
/// what four threads sent faster than one of them filtered it).
@Suite struct BoundedIntakeTests {
    final class Census: Sendable {
        let live = AtomicValue<Int>(0)
        let peak = AtomicValue<Int>(0)
    }

    final class Payload: Sendable {
        let census: Census
        let sequence: Int
        init(_ census: Census, _ sequence: Int) {
            self.census = census
            self.sequence = sequence
            census.peak.max(census.live.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
        }
        deinit { census.live.subtract(1, ordering: .relaxed) }
    }

    @Test(arguments: [BufferPolicy.dropOldest(capacity: 64), .dropNewest(capacity: 64)])
    func aDroppingPolicyBoundsTheIntakeOfTheStages(policy: BufferPolicy) {
        let census = Census()
        let target = ManualTarget()  // a stalled consumer until the producers are done
        let delivered = AtomicValue<Int>(0)
        let receptionist = Receptionist.pipeline(of: Payload.self)
            .filter { _ in true }
            .deliver(on: target, buffering: policy) { _ in delivered.add(1, ordering: .relaxed) }
        let producers = 4
        let perProducer = scaled(50_000)
        onThreads(producers) { producer in
            for sequence in 0..<perProducer { receptionist.send(Payload(census, sequence)) }
        }
        receptionist.finish()
        #expect(waitUntil { target.runAll() == 0 && receptionist.isFinished })
        // At most `capacity` wait for the stages, `capacity` for the target, and each thread
        // holds the payload it is sending and the one being dropped.
        #expect(census.peak.load(ordering: .relaxed) <= 64 + 64 + 2 * producers + 2, "payloads alive at once")
        let statistics = receptionist.statistics
        #expect(statistics.received == producers * perProducer, "every send accepted, some dropped")
        #expect(statistics.delivered == delivered.load(ordering: .relaxed))
        #expect(statistics.delivered + statistics.dropped == producers * perProducer, "nothing lost uncounted")
        #expect(census.live.load(ordering: .relaxed) == 0)
    }

    @Test func anUnboundedPipelineStillLosesNothing() {
        let target = ManualTarget()
        let delivered = AtomicValue<Int>(0)
        let receptionist = Receptionist.pipeline(of: Int.self)
            .filter { _ in true }
            .deliver(on: target) { _ in delivered.add(1, ordering: .relaxed) }
        onThreads(4) { _ in
            for value in 0..<scaled(10_000) { receptionist.send(value) }
        }
        receptionist.finish()
        #expect(waitUntil { target.runAll() == 0 && receptionist.isFinished })
        #expect(delivered.load(ordering: .relaxed) == 4 * scaled(10_000))
        #expect(receptionist.statistics.dropped == 0)
    }
}
