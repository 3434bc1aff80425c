import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// The states of the drain loop (`DeliveryEngine+Drain.swift`) and the ways out of each, one
/// test per transition the other suites do not pin down: a cancel while a drain holds a taken
/// segment (from its own task block and from another thread), the claimed inline drain (what
/// its task block sends, a cancel from it, a budget used up), and a cancel while parked at the
/// gate.
@Suite struct DrainLoopTests {
    // MARK: - `.delivering`, interrupted

    /// A task block that cancels its receptionist in the middle of a segment: the rest of the
    /// segment is discarded and counted, never run, and released outside the library's locks;
    /// no drain is left scheduled.
    @Test func aCancelFromATaskBlockStopsTheSegmentItsDrainHolds() {
        let target = ManualTarget()
        let log = Recorder<String>()
        let delivered = Recorder<String>()
        let handle = Locked<Receptionist<ReleaseProbe>?>(uncounted: nil)
        let watched = Receptionist<ReleaseProbe>(on: target) { probe in
            delivered.append(probe.name)
            if probe.name == "2" { handle.withLock { $0 }?.cancel() }
        }
        handle.withLock { $0 = watched }
        for index in 0..<6 { #expect(watched.send(ReleaseProbe("\(index)", log: log)).isAccepted) }
        #expect(target.pendingCount == 1, "one drain for the burst")

        target.runAll()

        #expect(delivered.values == ["0", "1", "2"])
        #expect(watched.isCancelled)
        let stats = watched.statistics
        #expect(stats.received == 6 && stats.delivered == 3 && stats.discarded == 3)
        #expect(stats.pending == 0 && stats.inFlight == 0, "the interrupted segment is no longer in flight")
        #expect(target.pendingCount == 0, "an interrupted drain submits nothing")
        #expect(log.values.count == 6, "every element released: the three run and the three left in the segment")
        #expect(log.values.allSatisfy { $0.hasSuffix("outside") }, "\(log.values)")
        #expect(!watched.send(ReleaseProbe("late", log: log)).isAccepted, "nothing accepted after the cancel")
        handle.withLock { $0 = nil }
    }

    /// A cancel from another thread while a drain runs the first element of a taken segment:
    /// the drain runs nothing more of it once the cancel returned, and the rest is discarded.
    @Test func aCancelFromAnotherThreadStopsTheSegmentADrainHolds() {
        let target = ManualTarget()
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let cancelReturned = AtomicValue<Bool>(false)
        let startedAfterCancel = AtomicValue<Int>(0)
        let delivered = Recorder<Int>()
        let receptionist = Receptionist<Int>(on: target) { value in
            if cancelReturned.load(ordering: .acquiring) { startedAfterCancel.add(1, ordering: .relaxed) }
            delivered.append(value)
            if value == 0 {
                entered.signal()
                proceed.wait()
            }
        }
        for value in 0..<10 { receptionist.send(value) }
        let drained = DispatchSemaphore(value: 0)
        Thread {
            target.runAll()
            drained.signal()
        }.start()
        #expect(wait(entered), "the drain took the segment and runs its first element")
        #expect(receptionist.statistics.inFlight == 10, "the whole burst is in the drain's segment")
        receptionist.cancel()
        cancelReturned.store(true, ordering: .releasing)
        proceed.signal()
        #expect(wait(drained))

        #expect(delivered.values == [0])
        #expect(startedAfterCancel.load(ordering: .relaxed) == 0)
        let stats = receptionist.statistics
        #expect(stats.delivered == 1 && stats.discarded == 9 && stats.inFlight == 0 && stats.pending == 0)
        #expect(target.pendingCount == 0)
    }

    // MARK: - `.claimed`

    /// An idle inline receptionist is claimed by its sender: the task block runs on the sending
    /// thread before `send` returns, and what it sends meanwhile is buffered and run by the same
    /// drain, after it, in order.
    @Test func aClaimedDrainRunsWhatItsTaskBlockSentBeforeTheSendReturns() {
        let delivered = Recorder<Int>()
        // Marks the sending thread (this test runs synchronously, on one thread).
        let marker = "DrainLoopTests.sender"
        Thread.current.threadDictionary[marker] = true
        defer { Thread.current.threadDictionary.removeObject(forKey: marker) }
        let onSender = AtomicValue<Int>(0)
        let handle = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: .immediate) { value in
            delivered.append(value)
            if Thread.current.threadDictionary[marker] != nil { onSender.add(1, ordering: .relaxed) }
            if value == 0, let receptionist = handle.withLock({ $0 }) {
                #expect(receptionist.send(1).isAccepted && receptionist.send(2).isAccepted)
                #expect(delivered.values == [0], "a re-entrant send waits for the current task block")
            }
        }
        handle.withLock { $0 = receptionist }

        #expect(receptionist.send(0).isAccepted)

        #expect(delivered.values == [0, 1, 2])
        #expect(onSender.load(ordering: .relaxed) == 3)
        let stats = receptionist.statistics
        #expect(stats.received == 3 && stats.delivered == 3 && stats.pending == 0 && stats.inFlight == 0)
        handle.withLock { $0 = nil }
    }

    /// A claimed drain whose task block cancels: what the task block sent before the cancel is
    /// discarded and counted, and nothing runs after it.
    @Test func aClaimedDrainCancelledByItsTaskBlockRunsNothingMore() {
        let delivered = Recorder<Int>()
        let handle = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: .immediate) { value in
            delivered.append(value)
            guard value == 0, let receptionist = handle.withLock({ $0 }) else { return }
            receptionist.send(1)
            receptionist.send(2)
            receptionist.cancel()
            #expect(!receptionist.send(3).isAccepted)
        }
        handle.withLock { $0 = receptionist }

        #expect(receptionist.send(0).isAccepted)

        #expect(delivered.values == [0])
        let stats = receptionist.statistics
        #expect(stats.received == 3 && stats.delivered == 1 && stats.discarded == 2)
        #expect(stats.pending == 0 && stats.inFlight == 0)
        #expect(!receptionist.send(4).isAccepted)
        handle.withLock { $0 = nil }
    }

    /// A claimed inline drain without an overflow target that uses up its budget goes on with a
    /// new one on the same thread (`.yield` back to `.takingNext`), until the buffer is empty.
    @Test func aClaimedDrainGoesOnPastItsBudget() {
        let delivered = Recorder<Int>()
        let handle = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist<Int>(on: .immediate, drainBudget: 2) { value in
            delivered.append(value)
            guard value == 0, let receptionist = handle.withLock({ $0 }) else { return }
            for next in 1...7 { receptionist.send(next) }
        }
        handle.withLock { $0 = receptionist }

        #expect(receptionist.send(0).isAccepted)

        #expect(delivered.values == Array(0...7))
        #expect(receptionist.statistics.pending == 0 && receptionist.statistics.inFlight == 0)
        // Idle again: the next send claims it.
        #expect(receptionist.send(8).isAccepted)
        #expect(delivered.values.last == 8)
        handle.withLock { $0 = nil }
    }

    // MARK: - Parked at the gate

    /// A waiting pipeline cancelled while its intake's drain is parked (the outputs behind the
    /// stages stand for the capacity): the parked drain is never resumed, nothing is delivered
    /// after the cancel, and the pipeline (its stages, the intake the parked drain held) is
    /// released.
    @Test func aPipelineCancelledWhileParkedIsNeverResumedAndIsReleased() {
        let target = ManualTarget()
        let delivered = Recorder<Int>()
        let lifetimes = LifetimeCounter()
        var receptionist: Receptionist<Int>? = {
            let witness = LifetimeWitness(lifetimes)
            return Receptionist.pipeline(of: Int.self)
                .map { value in
                    witness.touch()
                    return value
                }
                .deliver(on: target, buffering: .waiting(capacity: 2)) { delivered.append($0) }
        }()
        weak let intake = receptionist!.stagedPipeline?.intake
        for value in 0..<4 { #expect(receptionist!.send(value).isAccepted) }
        // 0 and 1 wait behind the stages (standing for the capacity), 2 and 3 in front of them,
        // so the intake's drain parked.
        #expect(waitUntil { receptionist!.statistics.pending == 2 && receptionist!.intakeStatistics?.pending == 2 })

        receptionist!.cancel()
        receptionist = nil
        target.runAll()

        #expect(delivered.values.isEmpty, "nothing after the cancel")
        #expect(waitUntil { lifetimes.deinitialized == 1 }, "the stages were released")
        #expect(waitUntil { intake == nil }, "the parked drain let go of the intake")
        #expect(target.pendingCount == 0)
    }

    /// A cancel that lands between the end of a gated intake's segment and its park (issue 35):
    /// the drain ran the segment (its outputs now stand for the gate's capacity), the pipeline was
    /// cancelled (`cancel()` cancels the engine, then the gate, which finds nothing parked), and
    /// only then does the drain, out of room, reach the park. Here the segment's last task block
    /// plays the stages and the cancel, as `StagedPipeline.cancel()` does it, so the order is
    /// exact. The gate remembers the cancel: the drain does not park, and nothing holds the
    /// engine once its owner lets go.
    @Test func aCancelBetweenTheEndOfASegmentAndTheParkLeavesNothingParked() {
        let target = ManualTarget()
        let gate = DrainGate(capacity: 2)
        let handle = Locked<ReceptionistCore<Int>?>(uncounted: nil)
        var engine: ReceptionistCore<Int>? = ReceptionistCore<Int>(
            Delivery(on: target, buffering: .waiting(capacity: 4)) { value in
                // The stages: each input becomes an output waiting behind them.
                gate.inputTaken()
                _ = gate.weigh()
                if value == 1 {
                    // The outputs now stand for the capacity; the pipeline is cancelled.
                    handle.withLock { $0 }?.cancel()
                    gate.cancel()
                }
            },
            gate: gate)
        handle.withLock { $0 = engine }
        weak let released = engine
        #expect(engine!.send(0).isAccepted)
        #expect(engine!.send(1).isAccepted)
        #expect(target.pendingCount == 1)
        target.runAll()

        #expect(engine!.isCancelled)
        let parked = gate.parked.load(ordering: .sequentiallyConsistent)
        #expect(!parked, "a cancelled intake's drain does not park")
        handle.withLock { $0 = nil }
        engine = nil
        #expect(released == nil, "no parked drain holds the engine")
        #expect(target.pendingCount == 0)
    }
}
