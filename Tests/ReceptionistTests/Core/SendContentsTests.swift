import Dispatch
import Testing

@testable import Receptionist

/// `send(contentsOf:)` (issue 40, item 7): many elements, one lock step, one answer; on every
/// kind of receptionist (without stages, with stages, converting), and on each policy.
@Suite struct SendContentsTests {
    /// Two shapes a receptionist has (the third, converting, is `coalesce()` alone, below), each
    /// with a target run by hand.
    enum Shape: String, CaseIterable, CustomStringConvertible {
        case direct, staged
        var description: String { rawValue }

        func make(
            on target: ManualTarget, buffering policy: BufferPolicy = .unbounded,
            _ block: @escaping @Sendable (Int) -> Void
        ) -> Receptionist<Int> {
            switch self {
            case .direct: Receptionist(on: target, buffering: policy, block)
            case .staged: Receptionist.pipeline(of: Int.self).map { $0 }.deliver(on: target, buffering: policy, block)
            }
        }
    }

    @Test(arguments: Shape.allCases)
    func everyElementIsDeliveredInOrderAfterOneAnswer(shape: Shape) {
        let target = ManualTarget()
        let delivered = Recorder<Int>()
        let receptionist = shape.make(on: target) { delivered.append($0) }
        #expect(receptionist.send(0) == .accepted)
        #expect(receptionist.send(contentsOf: 1...5) == SendContentsResult(count: 5, accepted: 5, result: .accepted))
        #expect(receptionist.send(contentsOf: [6, 7].lazy.map { $0 }).accepted == 2, "any sequence")
        runUntilIdle(target)
        #expect(delivered.values == Array(0...7))
        #expect(receptionist.statistics.received == 8)
    }

    @Test(arguments: Shape.allCases)
    func anEndedReceptionistRefusesThemAllAndAnEmptySequenceGetsTheStateAsAnAnswer(shape: Shape) {
        let target = ManualTarget()
        let delivered = Recorder<Int>()
        let receptionist = shape.make(on: target) { delivered.append($0) }
        #expect(receptionist.send(contentsOf: []) == SendContentsResult(count: 0, accepted: 0, result: .accepted))
        receptionist.cancel()
        #expect(
            receptionist.send(contentsOf: [1, 2, 3])
                == SendContentsResult(count: 3, accepted: 0, result: .refused(.cancelled)))
        #expect(receptionist.send(contentsOf: []).result == .refused(.cancelled))
        runUntilIdle(target)
        #expect(delivered.values.isEmpty)
        #expect(receptionist.statistics.received == 0)

        let finishing = shape.make(on: target) { _ in }
        finishing.finish()
        #expect(finishing.send(contentsOf: [1]).result == .refused(.finished))
        runUntilIdle(target)
    }

    /// A pause answered to any of them is the answer; the elements are kept all the same, and
    /// the strategy paused once.
    @Test(arguments: Shape.allCases)
    func aPauseReachedInTheMiddleIsTheAnswer(shape: Shape) {
        let target = ManualTarget()
        let delivered = Recorder<Int>()
        let receptionist = shape.make(on: target, buffering: .watermarks(low: 1, high: 4)) { delivered.append($0) }
        #expect(receptionist.send(contentsOf: 0..<2).result == .accepted, "2 held, below high")
        let crossing = receptionist.send(contentsOf: 2..<10)
        #expect(crossing.shouldPause && crossing.accepted == 8, "crossed high at the 4th, all kept: \(crossing)")
        #expect(receptionist.writability == .paused)
        #expect(receptionist.send(contentsOf: []).result == .acceptedAboveHighWatermark, "still paused")
        // A pipeline's stages run on a queue of the library: wait for them, running the target.
        #expect(
            waitUntil {
                target.runAll()
                return delivered.count == 10
            })
        #expect(delivered.values == Array(0..<10), "kept all the same")
        #expect(receptionist.writability == .writable)
        #expect(receptionist.statistics.pauses == 1)
    }

    /// `coalesce()` alone converts on the sending thread (no intake): the elements are folded as
    /// sent in turn, the last one's answer is the answer, and the latest is delivered.
    @Test func aCoalescingReceptionistFoldsThemAsSentInTurn() {
        let target = ManualTarget()
        let delivered = Recorder<Int>()
        let receptionist = Receptionist.pipeline(of: Int.self).coalesce().deliver(on: target) {
            delivered.append($0.latest)
        }
        #expect(
            receptionist.send(contentsOf: 0..<10) == SendContentsResult(count: 10, accepted: 10, result: .coalesced),
            "the first is accepted, the rest folded (kept in it)")
        runUntilIdle(target)
        #expect(receptionist.send(contentsOf: [10]).result == .accepted)
        runUntilIdle(target)
        #expect(delivered.values == [9, 10])
        #expect(receptionist.statistics.coalesced == 9)
        receptionist.cancel()
        #expect(receptionist.send(contentsOf: [11]).result == .refused(.cancelled))
    }

    /// A dropping buffer treats each element as `send` would: once full, every later one is
    /// dropped (or evicts), and the answer says so.
    @Test func aDroppingBufferAnswersForTheLastElement() {
        let target = ManualTarget()
        let newest = Recorder<Int>()
        let dropsNewest = Receptionist<Int>(on: target, buffering: .dropNewest(capacity: 3)) { newest.append($0) }
        #expect(dropsNewest.send(contentsOf: 0..<3) == SendContentsResult(count: 3, accepted: 3, result: .accepted))
        #expect(dropsNewest.send(contentsOf: 3..<6) == SendContentsResult(count: 3, accepted: 0, result: .dropped))
        let oldest = Recorder<Int>()
        let dropsOldest = Receptionist<Int>(on: target, buffering: .dropOldest(capacity: 3)) { oldest.append($0) }
        #expect(
            dropsOldest.send(contentsOf: 0..<6)
                == SendContentsResult(count: 6, accepted: 6, result: .acceptedEvictingOldest))
        runUntilIdle(target)
        #expect(newest.values == [0, 1, 2])
        #expect(dropsNewest.statistics.dropped == 3)
        #expect(oldest.values == [3, 4, 5])
        #expect(dropsOldest.statistics.dropped == 3)
    }

    /// A pipeline whose intake drops takes them one at a time: what it answers and delivers is
    /// what the same sends one by one give a twin pipeline.
    @Test func aPipelineWithADroppingIntakeDoesWhatSendDoes() {
        let target = ManualTarget()
        let together = Recorder<Int>()
        let oneByOne = Recorder<Int>()
        let receptionist = Shape.staged.make(on: target, buffering: .dropNewest(capacity: 2)) { together.append($0) }
        let twin = Shape.staged.make(on: target, buffering: .dropNewest(capacity: 2)) { oneByOne.append($0) }
        let answer = receptionist.send(contentsOf: 0..<1_000)
        var twinAnswers: [SendResult] = []
        for element in 0..<1_000 { twinAnswers.append(twin.send(element)) }
        receptionist.finish()
        twin.finish()
        #expect(
            waitUntil {
                target.runAll()
                return receptionist.isFinished && twin.isFinished
            })
        #expect(answer.result == twinAnswers.last, "the last one's answer (none paused, none refused)")
        #expect(answer.count == 1_000 && answer.accepted == twinAnswers.filter(\.isAccepted).count, "\(answer)")
        #expect(together.values == oneByOne.values)
        let statistics = receptionist.statistics
        #expect(statistics.dropped == twin.statistics.dropped && statistics.dropped > 0, "\(statistics)")
        #expect(statistics.delivered + statistics.dropped == 1_000, "\(statistics)")
    }

    /// With `.waiting`, each element waits for room as `send` would, and all arrive in order.
    @Test func aWaitingBufferTakesThemOneAtATimeAndLosesNothing() {
        let queue = DispatchQueue(label: "SendContentsTests.waiting")
        let delivered = Recorder<Int>()
        let done = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: queue, buffering: .waiting(capacity: 2)) { value in
            delivered.append(value)
            if value == 499 { done.signal() }
        }
        let answer = receptionist.send(contentsOf: 0..<500)
        #expect(answer == SendContentsResult(count: 500, accepted: 500, result: .accepted))
        #expect(wait(done))
        #expect(delivered.values == Array(0..<500))
        #expect(receptionist.statistics.waits > 0, "a capacity of 2 made the sender wait")
    }

    /// Elements sent together are buffered together: no other thread's element lands between
    /// them, whatever the interleaving, on every shape; nothing lost, nothing duplicated, each
    /// thread's order kept.
    @Test(arguments: Shape.allCases)
    func elementsSentTogetherStayTogetherUnderContention(shape: Shape) {
        let threads = 8
        let batches = 1_000
        let queue = DispatchQueue(label: "SendContentsTests.together.\(shape)")
        let delivered = Recorder<Int>()
        let receptionist: Receptionist<Int> =
            switch shape {
            case .direct: Receptionist(on: queue) { delivered.append($0) }
            case .staged: Receptionist.pipeline(of: Int.self).map { $0 }.deliver(on: queue) { delivered.append($0) }
            }
        onThreads(threads) { thread in
            var random = SplitMix64(seed: UInt64(thread))
            var sequence = 0
            for _ in 0..<batches {
                let size = Int.random(in: 1...16, using: &random)
                let batch = (sequence..<sequence + size).map { stamp(thread, $0) }
                sequence += size
                if Bool.random(using: &random) {
                    _ = receptionist.send(contentsOf: batch)
                } else {
                    for element in batch { _ = receptionist.send(element) }
                }
            }
            // The last batch, marked: its size tells the checker how many this thread sent.
            _ = receptionist.send(contentsOf: [stamp(thread, sequence)])
        }
        receptionist.finish()
        #expect(waitUntil { receptionist.isFinished })
        let values = delivered.values
        let checker = OrderChecker()
        for value in values { checker.record(value) }
        #expect(checker.report.duplicatedOrReordered == 0 && checker.report.gaps == 0, "\(checker.report)")
        var sentPerThread = 0
        for thread in 0..<threads { sentPerThread += (checker.lastSequence(of: thread) ?? -1) + 1 }
        #expect(values.count == sentPerThread, "every element once")
        // Contiguity: replay each thread's batches with the same seed and find each
        // `send(contentsOf:)` batch as one run in what was delivered.
        var position: [Int: Int] = [:]
        for (index, value) in values.enumerated() { position[value] = index }
        var split = 0
        for thread in 0..<threads {
            var random = SplitMix64(seed: UInt64(thread))
            var sequence = 0
            for _ in 0..<batches {
                let size = Int.random(in: 1...16, using: &random)
                let together = Bool.random(using: &random)
                if together, let first = position[stamp(thread, sequence)],
                    position[stamp(thread, sequence + size - 1)] != first + size - 1
                {
                    split += 1
                }
                sequence += size
            }
        }
        #expect(split == 0, "\(split) batches had another thread's element between theirs")
    }

    /// Runs the manual target until nothing is left to run.
    private func runUntilIdle(_ target: ManualTarget) {
        while target.runAll() > 0 {}
    }
}
