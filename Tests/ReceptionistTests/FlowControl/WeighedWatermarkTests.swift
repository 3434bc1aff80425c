import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Watermarks counted in weight (issue 40, item 5): `Receptionist(on:buffering:weighing:_:)` and
/// `deliver(on:buffering:weighing:_:)`. The level is what the undelivered events weigh, from their
/// `send` until their task block returned, on either side of the stages.
@Suite struct WeighedWatermarkTests {
    typealias StalledConsumer = FlowControlContractTests.StalledConsumer

    /// Chunks of these sizes against `low` 100 / `high` 1 000: pause at the fourth (1 010 bytes
    /// held, where a count would see 4 events), resume once no more than 100 bytes are undelivered.
    static let sizes = [500, 400, 50, 60, 100]

    /// Weighings, named so that a call site has one trailing closure (the task block).
    static let utf8Count: @Sendable (String) -> Int = { $0.utf8.count }
    static let byteCount: @Sendable ([UInt8]) -> Int = { $0.count }
    static let value: @Sendable (Int) -> Int = { $0 }
    static let nothing: @Sendable (Int) -> Int = { _ in 0 }

    /// Sends `sizes` while the first task block is stalled; each task block reads the state as it
    /// starts. Returns the answers and the states seen.
    private func run(staged: Bool) -> (answers: [SendResult], states: [Writability], pauses: Int) {
        let recorder = FlowControlContractTests.StateRecorder<[UInt8]>()
        let consumer = recorder.consumer
        let queue = DispatchQueue(label: "WeighedWatermarkTests.\(staged)")
        let policy = BufferPolicy.watermarks(low: 100, high: 1_000)
        let receptionist =
            staged
            ? Receptionist.pipeline(of: [UInt8].self).map { $0 }
                .deliver(on: queue, buffering: policy, weighing: Self.byteCount, recorder.block)
            : Receptionist<[UInt8]>(on: queue, buffering: policy, weighing: Self.byteCount, recorder.block)
        recorder.watch(receptionist)
        var answers: [SendResult] = []
        for (index, size) in Self.sizes.enumerated() {
            answers.append(receptionist.send([UInt8](repeating: 0, count: size)))
            if index == 0 { #expect(consumer.entered.wait(timeout: .now() + 60) == .success) }
            // One at a time through the stages: while they hand an event on, it counts on both
            // sides of them, and the next send would see it twice. The last waits in front of
            // them: the four before it stand for 1 010 bytes behind them, past `high`.
            if staged, index < 4 {
                #expect(waitUntil(seconds: 60) { receptionist.intakeStatistics?.delivered == index + 1 })
            }
        }
        #expect(!receptionist.isWritable, "1 110 bytes undelivered")
        consumer.release.signal()
        #expect(waitUntil(seconds: 60) { recorder.seen.count == Self.sizes.count })
        let pauses = receptionist.statistics.pauses
        #expect(waitUntil(seconds: 60) { receptionist.isWritable }, "everything delivered")
        recorder.stop()
        receptionist.cancel()
        return (answers, recorder.seen, pauses)
    }

    @Test(arguments: [false, true])
    func theLevelIsWhatTheUndeliveredEventsWeigh(staged: Bool) {
        let (answers, states, pauses) = run(staged: staged)
        // 500, 900, 950: under 1 000; 1 010: the first at or above it; 1 110: still paused.
        #expect(
            answers == [.accepted, .accepted, .accepted, .acceptedAboveHighWatermark, .acceptedAboveHighWatermark],
            "\(answers)")
        #expect(pauses == 1)
        // Undelivered as each block starts: 1 110 (itself included), 610, 210, 160, 100. The
        // producer resumes when the fourth block returned (100 left, at `low`): the fifth reads
        // writable. Behind stages, the output being handed on counts on both sides for a moment,
        // so the resume may come a block later (then after the last).
        #expect(states[..<4].allSatisfy { $0 == .paused }, "\(states)")
        if !staged { #expect(states[4] == .writable, "\(states)") }
    }

    /// Strings weighed in UTF-8 bytes, `low` 0 / `high` 10, to a consumer whose first task block
    /// stalls.
    private func stalledStrings(_ name: String) -> (StalledConsumer, Receptionist<String>) {
        let consumer = StalledConsumer()
        let receptionist = Receptionist<String>(
            on: DispatchQueue(label: "WeighedWatermarkTests.\(name)"), buffering: .watermarks(low: 0, high: 10),
            weighing: Self.utf8Count
        ) { _ in consumer.stallOnce() }
        return (consumer, receptionist)
    }

    /// `send(contentsOf:)` adds what the events weigh together, and answers pause once.
    @Test func manyEventsAtOnceAddTheirWeight() {
        let (consumer, receptionist) = stalledStrings("contents")
        #expect(receptionist.send("ab") == .accepted)
        #expect(consumer.entered.wait(timeout: .now() + 60) == .success)
        let small = receptionist.send(contentsOf: ["abc", "def"])
        #expect(small.accepted == 2 && small.result == .accepted, "8 bytes: \(small)")
        let large = receptionist.send(contentsOf: ["gh", "ij"])
        #expect(large.accepted == 2 && large.result == .acceptedAboveHighWatermark, "12 bytes: \(large)")
        #expect(receptionist.statistics.pauses == 1)
        consumer.release.signal()
        #expect(waitUntil(seconds: 60) { receptionist.isWritable })
        #expect(receptionist.statistics.delivered == 5)
        receptionist.cancel()
    }

    /// `sendSuspending` keeps its event and suspends while the bytes undelivered are above `low`.
    @Test func sendSuspendingWaitsUntilTheBytesAreDownToLow() async {
        let (consumer, receptionist) = stalledStrings("suspending")
        #expect(receptionist.send("ab") == .accepted)
        let returned = AtomicValue<Bool>(false)
        let task = Task {
            let result = await receptionist.sendSuspending("abcdefghijkl")
            returned.store(true, ordering: .releasing)
            return result
        }
        #expect(await waitUntilAsync(seconds: 60) { receptionist.statistics.pauses == 1 }, "14 bytes: paused")
        let returnedEarly = returned.load(ordering: .acquiring)
        #expect(!returnedEarly, "suspended while the first block is stalled")
        consumer.release.signal()
        #expect(await task.value == .acceptedAboveHighWatermark)
        #expect(receptionist.statistics.delivered == 2, "resumed at low 0: both delivered")
        receptionist.cancel()
    }

    /// The main-actor overloads weigh as the others do: 12 bytes sent together pause at `high` 10.
    @Test func theMainActorOverloadsWeighToo() {
        let direct = Receptionist<String>(
            on: .mainActor, buffering: .watermarks(low: 0, high: 10), weighing: Self.utf8Count
        ) { _ in }
        let staged = Receptionist.pipeline(of: String.self).map { $0 }
            .deliver(on: .mainActor, buffering: .watermarks(low: 0, high: 10), weighing: Self.utf8Count) { _ in }
        for receptionist in [direct, staged] {
            let answer = receptionist.send(contentsOf: ["abcdef", "ghijkl"])
            #expect(answer.accepted == 2 && answer.result == .acceptedAboveHighWatermark, "\(answer)")
            receptionist.cancel()
        }
    }

    /// The stages' drain of a weighed pipeline takes one event per step, and still gives the stage
    /// queue back after its budget of 256: 1 000 events waiting, each moving the clock 1 ms in its
    /// stage, make no drain longer than 256 ms (a drain that kept the queue took all 1 000).
    @Test func aWeighedStageDrainGivesTheStageQueueBackAfterItsBudget() {
        let clock = ManualDeliveryClock()
        let gate = DispatchSemaphore(value: 0)
        let first = AtomicValue<Bool>(true)
        let received = Recorder<Int>()
        var delivery = Delivery<Int>(
            on: DispatchQueue(label: "WeighedWatermarkTests.budget"), buffering: .watermarks(low: 1, high: 1_000_000)
        ) { received.append($0) }
        delivery.clock = DeliveryClock(manual: clock)
        let pipeline = Receptionist.pipeline(of: Int.self)
            .map { value in
                // The first waits until all are sent, so that the drain finds 999 waiting.
                if first.exchange(false, ordering: .relaxed) { gate.wait() }
                clock.advance(by: .milliseconds(1))
                return value
            }
            .start(delivery, weighing: Self.value)
        for value in 0..<1_000 { _ = pipeline.send(value) }
        gate.signal()
        pipeline.finish()
        #expect(waitUntil(seconds: 60) { pipeline.isFinished })
        #expect(received.values == Array(0..<1_000))
        let longest = pipeline.intakeStatistics?.timing.longestDrain ?? .zero
        #expect(longest <= .milliseconds(256), "the longest drain of the stages: \(longest)")
        #expect(longest >= .milliseconds(200), "the drains ran their budget: \(longest)")
    }

    /// Events that weigh nothing never pause the producer, however many wait.
    @Test func eventsThatWeighNothingNeverPause() {
        let consumer = StalledConsumer()
        let queue = DispatchQueue(label: "WeighedWatermarkTests.zero")
        let receptionist = Receptionist<Int>(on: queue, buffering: .watermarks(low: 0, high: 1), weighing: Self.nothing)
        {
            _ in consumer.stallOnce()
        }
        #expect(receptionist.send(0) == .accepted)
        #expect(consumer.entered.wait(timeout: .now() + 60) == .success)
        let answers = (1...1_000).map { receptionist.send($0) }
        #expect(answers.allSatisfy { $0 == .accepted })
        #expect(receptionist.isWritable)
        consumer.release.signal()
        receptionist.finish()
        #expect(waitUntil(seconds: 60) { receptionist.isFinished })
        #expect(receptionist.statistics.delivered == 1_001)
    }

    /// A producer that pauses when told, events of 1 to 1 000 bytes through a `map` and a
    /// count-only `batch`, `high` 10 000: the bytes undelivered never pass `high` by more than the
    /// event that crossed it and the open batch, and nothing is lost or reordered. (Counted in
    /// events instead, `high` 10 000 would let about 5 000 000 bytes wait.)
    @Test func aProducerThatPausesWhenToldKeepsTheBytesWithinTheBound() {
        let high = 10_000
        let sentBytes = AtomicValue<Int>(0)
        let deliveredBytes = AtomicValue<Int>(0)
        let maxUndelivered = AtomicValue<Int>(0)
        let received = Recorder<[Int]>()
        let spin = AtomicValue<Int>(0)
        // The first task block holds the target until the producer paused, so that the backlog
        // reaches the bound however the threads are scheduled.
        let pausedOnce = AtomicValue<Bool>(false)
        let holdsFirstBlock = AtomicValue<Bool>(true)
        let queue = DispatchQueue(label: "WeighedWatermarkTests.bound")
        let weight: @Sendable (Int) -> Int = { $0 % 1_000 + 1 }
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { $0 }
            .batch(count: 4)
            .deliver(on: queue, buffering: .watermarks(low: 2_000, high: high), weighing: weight) { batch in
                if holdsFirstBlock.exchange(false, ordering: .relaxed) {
                    #expect(waitUntil(seconds: 60) { pausedOnce.load(ordering: .acquiring) }, "the producer paused")
                }
                // Undelivered as this block starts: every byte sent less those of the blocks that
                // returned.
                let undelivered = sentBytes.load(ordering: .acquiring) - deliveredBytes.load(ordering: .acquiring)
                if undelivered > maxUndelivered.load(ordering: .relaxed) {
                    maxUndelivered.store(undelivered, ordering: .relaxed)
                }
                for _ in 0..<200 { spin.add(1, ordering: .relaxed) }
                received.append(batch)
                deliveredBytes.add(batch.map(weight).reduce(0, +), ordering: .releasing)
            }
        let total = 20_000
        var pauses = 0
        for value in 0..<total {
            sentBytes.add(weight(value), ordering: .releasing)
            if receptionist.send(value).shouldPause {
                pauses += 1
                pausedOnce.store(true, ordering: .releasing)
                let resume = DispatchSemaphore(value: 0)
                receptionist.whenWritable(on: .immediate) { _ in resume.signal() }
                #expect(resume.wait(timeout: .now() + 60) == .success)
            }
        }
        receptionist.finish()
        #expect(waitUntil(seconds: 60) { receptionist.isFinished })
        #expect(received.values.flatMap { $0 } == Array(0..<total), "nothing lost, in order")
        #expect(pauses > 0)
        // At most `high` − 1 before the send that crossed it, plus that event (1 000 at most),
        // plus the open batch (3 events, which a count-only batch keeps uncounted until the next).
        let most = maxUndelivered.load(ordering: .relaxed)
        #expect(most <= high + 1_000 + 3 * 1_000, "\(most) bytes undelivered")
    }

    // The rejected configurations (a weighing without watermarks, a negative weight, a time-based
    // stage, coalesce()) are checked on a release build by .ci/check-release-messages (probes
    // `weighing-*`), not by exit tests here: each exit test adds a child process to a suite run in
    // which swift-testing's exit-test monitor has been seen to hang.
}
