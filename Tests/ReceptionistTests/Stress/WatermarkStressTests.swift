import Dispatch
import Foundation
import Testing

@testable import Receptionist

extension Stress {
    /// Producers that must not block, on a `.watermarks(low:high:)` receptionist or pipeline (issue
    /// 34): each pauses when its send answers `acceptedAboveHighWatermark` and goes on when its
    /// `whenWritable` block runs, while a consumer drains and, per seed, a cancel or a finish lands
    /// at a random moment. The first task block holds the target until a producer was told to
    /// pause (or the run ended), so that every run without an ending pauses its producers, however
    /// the threads are scheduled (issue 41, item 4).
    @Suite(.serialized, .tags(.stress))
    struct WatermarkStressTests {
        static let producers = 4
        static let low = 16
        static let high = 64

        /// Without stages or behind a `map`; counted in elements, or weighed (`weighing:`, each
        /// element weighing 1 to 128 by its sequence number, against watermarks 64 times higher).
        enum Shape: String, CaseIterable, CustomTestStringConvertible, Sendable {
            case direct, staged, weighedDirect, weighedStaged
            var testDescription: String { rawValue }
            var isWeighed: Bool { self == .weighedDirect || self == .weighedStaged }
            var hasStages: Bool { self == .staged || self == .weighedStaged }
        }

        /// What an element weighs in the weighed shapes.
        static let weight: @Sendable (Int) -> Int = { ($0 & 0x7F) &+ 1 }
        static let weightScale = 64

        /// What ends the run early: nothing, a cancel, or a finish, at a random moment.
        enum Ending: Int, CaseIterable, Sendable {
            case none, cancel, finish
        }

        /// What one producer saw.
        struct ProducerOutcome: Sendable {
            var accepted = 0
            var pauses = 0
            /// A resume that never came (the producer gave up waiting for it).
            var stranded = false
            /// A send that answered anything but accepted or paused while the receptionist was
            /// still running, or a refusal before the end.
            var unexpected: [String] = []
        }

        @Test(arguments: Shape.allCases, 0..<6)
        func pausedProducersAreAlwaysResumedAndNothingIsLostOrDuplicated(shape: Shape, seed: Int) {
            let perProducer = scaled(3_000)
            let ending = Ending.allCases[seed % 3]
            let checker = OrderChecker()
            let queue = DispatchQueue(label: "WatermarkStressTests.consumer")
            let spin = AtomicValue<Int>(0)
            let registered = AtomicValue<Int>(0)
            let ended = AtomicValue<Bool>(false)
            let holdsFirstBlock = AtomicValue<Bool>(true)
            // Weighed shapes: what the producers sent (added before each send) and what the task
            // blocks returned with, so that each block sees an upper bound of the weight undelivered.
            let sentWeight = AtomicValue<Int>(0)
            let consumedWeight = AtomicValue<Int>(0)
            let maxUndelivered = AtomicValue<Int>(0)
            let consume: @Sendable (Int) -> Void = { value in
                if shape.isWeighed {
                    let undelivered = sentWeight.load(ordering: .acquiring) - consumedWeight.load(ordering: .acquiring)
                    if undelivered > maxUndelivered.load(ordering: .relaxed) {
                        maxUndelivered.store(undelivered, ordering: .relaxed)
                    }
                }
                defer { if shape.isWeighed { consumedWeight.add(Self.weight(value), ordering: .releasing) } }
                if holdsFirstBlock.exchange(false, ordering: .relaxed) {
                    #expect(
                        waitUntil { registered.load(ordering: .relaxed) > 0 || ended.load(ordering: .acquiring) },
                        "a producer paused while the first task block ran")
                }
                // A random amount of work per element, so that the backlog rises and falls.
                for _ in 0..<(value & 0x7F) { spin.add(1, ordering: .relaxed) }
                checker.record(value)
            }
            let policy = BufferPolicy.watermarks(low: Self.low, high: Self.high)
            let weighed = BufferPolicy.watermarks(low: Self.low * Self.weightScale, high: Self.high * Self.weightScale)
            let receptionist: Receptionist<Int> =
                switch shape {
                case .direct: Receptionist<Int>(on: queue, buffering: policy, consume)
                case .staged:
                    Receptionist.pipeline(of: Int.self).map { $0 }.deliver(on: queue, buffering: policy, consume)
                case .weighedDirect: Receptionist<Int>(on: queue, buffering: weighed, weighing: Self.weight, consume)
                case .weighedStaged:
                    Receptionist.pipeline(of: Int.self).map { $0 }
                        .deliver(on: queue, buffering: weighed, weighing: Self.weight, consume)
                }
            let resumed = AtomicValue<Int>(0)
            let outcomes = Locked<[ProducerOutcome]>(
                uncounted: Array(repeating: ProducerOutcome(), count: Self.producers))

            // The ending, from its own thread, after a random part of the sends.
            var random = SplitMix64(seed: UInt64(seed) &* 7919 &+ 3)
            let endAfter = Int.random(in: 0..<(Self.producers * perProducer), using: &random)
            let sent = AtomicValue<Int>(0)
            let endDone = DispatchSemaphore(value: 0)
            Thread {
                if ending != .none {
                    _ = waitUntil(seconds: 120) { sent.load(ordering: .relaxed) >= endAfter }
                    ended.store(true, ordering: .releasing)
                    if ending == .cancel { receptionist.cancel() } else { receptionist.finish() }
                }
                endDone.signal()
            }.start()

            onThreads(Self.producers) { producer in
                var outcome = ProducerOutcome()
                sending: for sequence in 0..<perProducer {
                    let value = stamp(producer, sequence)
                    if shape.isWeighed { sentWeight.add(Self.weight(value), ordering: .releasing) }
                    let result = receptionist.send(value)
                    sent.add(1, ordering: .relaxed)
                    switch result {
                    case .accepted:
                        outcome.accepted += 1
                    case .acceptedAboveHighWatermark:
                        outcome.accepted += 1
                        outcome.pauses += 1
                        // Pause: go on only when called back, exactly once.
                        let resume = DispatchSemaphore(value: 0)
                        let calls = AtomicValue<Int>(0)
                        registered.add(1, ordering: .relaxed)
                        receptionist.whenWritable(on: .immediate) {
                            calls.add(1, ordering: .relaxed)
                            resumed.add(1, ordering: .relaxed)
                            resume.signal()
                        }
                        if resume.wait(timeout: .now() + 60) == .timedOut {
                            outcome.stranded = true
                            break sending
                        }
                        if calls.load(ordering: .relaxed) != 1 { outcome.unexpected.append("resumed twice") }
                    case .refused(.cancelled), .refused(.finished):
                        if !ended.load(ordering: .acquiring) { outcome.unexpected.append("\(result) before the end") }
                    default:
                        outcome.unexpected.append("\(result)")
                    }
                    if case .refused = result { break sending }
                }
                outcomes.withLock { $0[producer] = outcome }
            }
            #expect(wait(endDone))
            if ending != .cancel {
                receptionist.finish()
                #expect(waitUntil(seconds: 120) { receptionist.isFinished }, "everything accepted was delivered")
            }
            drainQueue(queue)

            let all = outcomes.withLock { $0 }
            #expect(!all.contains { $0.stranded }, "a paused producer was never called back")
            #expect(all.allSatisfy { $0.unexpected.isEmpty }, "\(all.map(\.unexpected))")
            #expect(resumed.load(ordering: .relaxed) == registered.load(ordering: .relaxed), "every resume ran once")
            let accepted = all.map(\.accepted).reduce(0, +)
            let report = checker.report
            #expect(report.duplicatedOrReordered == 0 && report.gaps == 0, "\(report)")
            let statistics = receptionist.statistics
            if ending == .cancel {
                // Behind the stages or without them, what was accepted was delivered or discarded;
                // in front of them, the intake's discards are its own.
                // A segment the stages' drain had taken when the cancel came is counted as discarded
                // once that drain sees the cancel, on the stage queue: wait for it. The one element
                // the stages were running when the cancel came is, like what a stage holds at a
                // cancel, in no counter (its output is refused by the cancelled delivery).
                let unaccountedAtMost = shape.hasStages ? 1 : 0
                func accounted() -> Int {
                    checker.report.received + receptionist.statistics.discarded
                        + (receptionist.intakeStatistics?.discarded ?? 0)
                }
                #expect(
                    waitUntil(seconds: 30) { accepted - accounted() <= unaccountedAtMost },
                    "delivered or discarded: \(accounted()) of \(accepted)")
                #expect(accounted() <= accepted, "nothing counted twice")
            } else {
                #expect(report.received == accepted && statistics.delivered == accepted, "nothing lost")
                #expect(statistics.dropped == 0 && statistics.discarded == 0)
            }
            if ending == .none {
                #expect(statistics.pauses > 0, "the held consumer made the producers pause")
                #expect(all.map(\.pauses).reduce(0, +) >= statistics.pauses)
            }
            // Producers that pause when told keep the backlog near the high watermark.
            switch shape {
            case .direct:
                #expect(statistics.maxPending <= Self.high + Self.producers, "\(statistics)")
            case .staged:
                #expect(statistics.maxPendingBeforeStages <= Self.high + Self.producers, "\(statistics)")
                #expect(statistics.maxPending <= Self.high, "\(statistics)")
            case .weighedDirect, .weighedStaged:
                // Below `high` until a send crosses it, plus one element per producer crossing it
                // at once; the producers' count runs ahead by one element each (added before the
                // send), and by one more each after a finish refused it.
                let most = maxUndelivered.load(ordering: .relaxed)
                let bound = Self.high * Self.weightScale + 3 * Self.producers * 128
                #expect(most <= bound, "weight undelivered: \(most), bound \(bound)")
            }
        }
    }
}
