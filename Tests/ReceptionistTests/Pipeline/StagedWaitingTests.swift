import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// `.waiting(capacity:)` behind stages and on actors: every producer waits for room, a send that
/// cannot wait is refused (never accepted and then lost), and nothing deadlocks.
///
/// Serialized: several tests block a thread of the default-QoS pool on purpose (a sender waiting
/// for room, a task block held on an actor) until something else runs on that pool (the stage
/// queue, the test's own task). On a 2-core machine the pool has two threads, so two such tests at
/// once left nothing to run it: a clean-clone CI run hung on
/// `aSynchronousSendFromATaskIntoAFullActorReceptionistIsRefused` and
/// `aPipelineFinishedAndReleasedWhileParkedDeliversEverything`, each waiting for the other's
/// thread.
@Suite(.serialized) struct StagedWaitingTests {
    /// Several producers, a held consumer: every producer ends up waiting in front of the stages
    /// (none inside them), and what the pipeline holds stays within the documented bound however
    /// many producers there are.
    @Test(arguments: [1, 2, 8])
    func everyProducerWaitsInFrontOfTheStages(producers: Int) {
        let capacity = 2
        let target = ManualTarget()
        let checker = OrderChecker()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { $0 }
            .deliver(on: target, buffering: .waiting(capacity: capacity)) { checker.record($0) }
        let perProducer = 200
        let accepted = AtomicValue<Int>(0)
        let done = DispatchSemaphore(value: 0)
        for producer in 0..<producers {
            Thread {
                for sequence in 0..<perProducer where receptionist.send(stamp(producer, sequence)).isAccepted {
                    accepted.add(1, ordering: .relaxed)
                }
                done.signal()
            }.start()
        }
        // With the consumer held, every producer blocks at the intake: the stages never wait.
        #expect(waitUntil { receptionist.intakeStatistics?.waits ?? 0 >= producers })
        let held = accepted.load(ordering: .relaxed)
        #expect(
            held <= StagedWaitingTests.bound(capacity: capacity),
            "accepted \(held) with nothing delivered; the bound is \(StagedWaitingTests.bound(capacity: capacity))")
        // Polled with `waitUntil`, which sleeps: a spinning test thread can keep libdispatch from
        // running the stage queue's drain (see `waitUntil`).
        var finished = 0
        #expect(
            waitUntil {
                target.runAll()
                if done.wait(timeout: .now()) == .success { finished += 1 }
                return finished == producers
            })
        receptionist.finish()
        #expect(
            waitUntil {
                target.runAll()
                return receptionist.isFinished
            })
        #expect(accepted.load(ordering: .relaxed) == producers * perProducer)
        #expect(
            checker.report == OrderChecker.Report(received: producers * perProducer, duplicatedOrReordered: 0, gaps: 0))
        let intake = receptionist.intakeStatistics!
        #expect(
            intake.maxPending <= capacity + 1,
            "the intake never held more than the capacity in elements (plus the finish, which never waits)")
        #expect(receptionist.statistics.maxPending <= capacity, "a map output stands for one input")
        #expect(receptionist.statistics.dropped == 0)
    }

    /// The most elements a map pipeline holds between `send` and the task block: `capacity`
    /// waiting at the intake, and outputs standing for `capacity` inputs behind the stages.
    static func bound(capacity: Int) -> Int { 2 * capacity }

    /// A batch stage: the capacity counts elements at both ends. In front of the stages, elements;
    /// behind them, a batch stands for its elements: once a batch of 10 waits (10 ≥ 3), the
    /// stages take no more until the task block took it.
    @Test func aBatchingPipelineBoundsElementsAtBothEnds() {
        let target = ManualTarget()
        let batches = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 10)
            .deliver(on: target, buffering: .waiting(capacity: 3)) { batches.append($0) }
        let accepted = AtomicValue<Int>(0)
        let done = DispatchSemaphore(value: 0)
        for producer in 0..<3 {
            Thread {
                for sequence in 0..<500 where receptionist.send(stamp(producer, sequence)).isAccepted {
                    accepted.add(1, ordering: .relaxed)
                }
                done.signal()
            }.start()
        }
        // Settled: one batch waits for its task block (it stands for 10 ≥ 3 elements, so the
        // stages took no more) and every producer waits at the intake.
        #expect(
            waitUntil {
                receptionist.statistics.pending == 1 && receptionist.intakeStatistics?.waits ?? 0 >= 3
                    && receptionist.intakeStatistics?.pending == 3
            })
        // One batch behind the stages, a partial batch from the intake segment that completed
        // it (fewer than the capacity), and the capacity waiting at the intake.
        #expect(accepted.load(ordering: .relaxed) <= 10 + 2 + 3)
        var finished = 0
        #expect(
            waitUntil {
                target.runAll()
                if done.wait(timeout: .now()) == .success { finished += 1 }
                return finished == 3
            })
        receptionist.finish()
        #expect(
            waitUntil {
                target.runAll()
                return receptionist.isFinished
            })
        let values = batches.values.flatMap { $0 }
        #expect(values.count == 1_500)
        #expect(Set(values).count == 1_500, "nothing lost or duplicated")
        #expect(batches.values.allSatisfy { $0.count == 10 })
        #expect(receptionist.statistics.maxPending == 1)
    }

    /// With the consumer held and the producers waiting, nothing the library runs waits: a flush,
    /// a timer fire and the finish return at once on the calling thread, and the stage queue
    /// keeps no thread.
    @Test func theStagesNeverWaitForTheConsumer() {
        let target = ManualTarget()
        let clock = ManualScheduler()
        let batches = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 4, every: .milliseconds(10), scheduler: clock)
            .deliver(on: target, buffering: .waiting(capacity: 2)) { batches.append($0) }
        let done = DispatchSemaphore(value: 0)
        Thread {
            for value in 0..<40 where !receptionist.send(value).isAccepted { break }
            done.signal()
        }.start()
        #expect(waitUntil { receptionist.intakeStatistics?.waits ?? 0 >= 1 })
        // Each of these used to run the stages on this thread and wait there for room.
        let returned = DispatchSemaphore(value: 0)
        Thread {
            receptionist.flush()
            clock.advance(by: .milliseconds(10))
            receptionist.finish()
            returned.signal()
        }.start()
        #expect(wait(returned, seconds: 10), "flush, timer fire and finish returned with the consumer held")
        #expect(
            waitUntil {
                target.runAll()
                return receptionist.isFinished && done.wait(timeout: .now()) == .success
            })
        let values = batches.values.flatMap { $0 }
        #expect(values == Array(0..<values.count), "in order, nothing lost, up to the finish")
        #expect(receptionist.statistics.dropped == 0 && receptionist.statistics.discarded == 0)
    }

    /// A pipeline finished and released while its stages are parked (the outputs behind them
    /// stand for the capacity) still delivers everything and completes: the parked drain holds
    /// the pipeline, as a submitted one does.
    @Test func aPipelineFinishedAndReleasedWhileParkedDeliversEverything() {
        let target = ManualTarget()
        let delivered = Recorder<Int>()
        let completed = Recorder<Bool>()
        var receptionist: Receptionist<Int>? = Receptionist.pipeline(of: Int.self)
            .map { $0 }
            .deliver(on: target, buffering: .waiting(capacity: 2)) { delivered.append($0) }
        // 0 and 1 wait behind the stages (standing for the capacity), 2 and 3 in front of them.
        // 2 and 3 are sent once the stages took 0 and 1, so that no send waits for the stage queue.
        for value in 0..<2 { #expect(receptionist!.send(value).isAccepted) }
        #expect(waitUntil { receptionist!.statistics.pending == 2 && receptionist!.intakeStatistics?.pending == 0 })
        for value in 2..<4 { #expect(receptionist!.send(value).isAccepted) }
        #expect(waitUntil { receptionist!.statistics.pending == 2 && receptionist!.intakeStatistics?.pending == 2 })
        receptionist!.finish { completed.append(true) }
        receptionist = nil
        #expect(
            waitUntil {
                target.runAll()
                return completed.count == 1
            })
        #expect(delivered.values == [0, 1, 2, 3])
    }

    /// A stage closure of one waiting pipeline that sends into another, full, waiting pipeline
    /// is a sender like any other: it waits for room (on the thread running its stages), and is
    /// not refused because both pipelines' stages run on the same stage queue.
    @Test func aStageClosureSendingIntoAnotherFullPipelineWaitsForRoom() {
        let second = ManualTarget()
        let inner = Receptionist.pipeline(of: Int.self)
            .map { $0 }
            .deliver(on: second, buffering: .waiting(capacity: 1)) { _ in }
        let results = Recorder<Bool>()
        let outer = Receptionist.pipeline(of: Int.self)
            .map { value -> Int in
                results.append(inner.send(value).isAccepted)
                return value
            }
            .deliver(on: ManualTarget(), buffering: .waiting(capacity: 8)) { _ in }
        for value in 0..<6 { outer.send(value) }
        #expect(
            waitUntil {
                second.runAll()
                return results.count == 6
            })
        #expect(results.values == Array(repeating: true, count: 6), "waited, never refused: \(results.values)")
        outer.cancel()
        inner.cancel()
    }

    /// A task block that sends into its own full staged pipeline: each send is either refused
    /// (`false`) or delivered; none is accepted and then lost.
    @Test(arguments: 0..<10)
    func aTaskBlockSendingIntoItsOwnFullPipelineIsRefusedNotLost(run: Int) {
        let queue = DispatchQueue(label: "StagedWaitingTests.own.\(run)")
        let seen = Recorder<Int>()
        let results = Recorder<(value: Int, accepted: Bool)>()
        let holder = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { $0 }
            .deliver(on: queue, buffering: .waiting(capacity: 2)) { value in
                seen.append(value)
                guard value == 0, let receptionist = holder.withLock({ $0 }) else { return }
                for more in 1...5 { results.append((more, receptionist.send(more).isAccepted)) }
            }
        holder.withLock { $0 = receptionist }
        receptionist.send(0)
        #expect(waitUntil { results.count == 5 })
        receptionist.finish()
        #expect(waitUntil { receptionist.isFinished })
        holder.withLock { $0 = nil }
        let accepted = results.values.filter(\.accepted).map(\.value)
        #expect(accepted.prefix(2) == [1, 2], "room for the capacity at least")
        #expect(seen.values == [0] + accepted, "every accepted send is delivered, in order")
        #expect(receptionist.statistics.dropped == 0)
    }

    /// `flush()` and `finish()` from the task block of a full staged pipeline hand on what the
    /// stages hold instead of losing it (the stages run on the stage queue, not on the target
    /// where they could not wait for room).
    @Test(arguments: 0..<10)
    func flushAndFinishFromTheTaskBlockLoseNothing(run: Int) {
        let queue = DispatchQueue(label: "StagedWaitingTests.flush.\(run)")
        let batches = Recorder<[Int]>()
        let sendResults = Recorder<Bool>()
        let holder = Locked<Receptionist<Int>?>(uncounted: nil)
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 100)
            .deliver(on: queue, buffering: .waiting(capacity: 1)) { batch in
                batches.append(batch)
                guard let receptionist = holder.withLock({ $0 }) else { return }
                if batch == [0] {
                    sendResults.append(receptionist.send(1).isAccepted)
                    receptionist.flush()
                    // The intake may still hold the flush: then there is no room, and waiting on
                    // the target would deadlock, so this send may be refused.
                    sendResults.append(receptionist.send(2).isAccepted)
                    receptionist.finish()
                }
            }
        holder.withLock { $0 = receptionist }
        receptionist.send(0)
        receptionist.flush()
        #expect(waitUntil { receptionist.isFinished })
        holder.withLock { $0 = nil }
        #expect(sendResults.values.first == true, "the intake had room for the first send")
        let expected = [[0], [1]] + (sendResults.values.last == true ? [[2]] : [])
        #expect(batches.values == expected)
        #expect(receptionist.statistics.dropped == 0)
    }

    /// `coalesce()` with a waiting policy never makes a sender wait: at most one output waits.
    @Test func aCoalescingPipelineNeverWaits() {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .coalesce()
            .deliver(on: target, buffering: .waiting(capacity: 1)) { seen.append($0.latest) }
        let done = DispatchSemaphore(value: 0)
        Thread {
            for value in 0..<1_000 { precondition(receptionist.send(value).isAccepted) }
            done.signal()
        }.start()
        #expect(wait(done), "the consumer never ran, yet no send waited")
        target.runAll()
        #expect(seen.values == [999])
        #expect(receptionist.statistics.waits == 0)
    }

    /// `sendSuspending` on a staged pipeline suspends at a full intake instead of blocking, and
    /// its cancellation ends the wait without sending.
    @Test func sendSuspendingSuspendsAtAFullIntake() async {
        let target = ManualTarget()
        let seen = Recorder<Int>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { $0 * 10 }
            .deliver(on: target, buffering: .waiting(capacity: 1)) { seen.append($0) }
        let producer = Task {
            for value in 0..<20 { await receptionist.sendSuspending(value) }
        }
        #expect(await waitUntilAsync { receptionist.intakeStatistics?.waits ?? 0 >= 1 })
        #expect(
            await waitUntilAsync {
                target.runAll()
                return seen.count >= 20
            })
        await producer.value
        #expect(seen.values == (0..<20).map { $0 * 10 })

        // A full pipeline, a suspended sender, then its task is cancelled.
        let stuck = Task { () -> [Bool] in
            var results: [Bool] = []
            for value in 100..<110 { results.append(await receptionist.sendSuspending(value).isAccepted) }
            return results
        }
        #expect(await waitUntilAsync { receptionist.intakeStatistics?.waits ?? 0 >= 2 })
        stuck.cancel()
        let results = await stuck.value
        #expect(results.contains(false), "the cancelled wait returned false")
        // A cancelled task still sends when there is room, so later sends may have gone through.
        let sent = results.filter { $0 }.count
        receptionist.finish()
        #expect(
            await waitUntilAsync {
                target.runAll()
                return receptionist.isFinished
            })
        #expect(seen.values.count == 20 + sent, "what was accepted was delivered, nothing else")
    }
}

/// Actor and main-actor targets: a send that would wait where the drain must run is refused.
extension StagedWaitingTests {
    actor Store {
        var received: [Int] = []
        func add(_ value: Int) { received.append(value) }
    }

    /// Two receptionists on one actor; the first's task block fills the second.
    @Test func aSendFromATaskBlockOnTheSameActorIsRefusedRatherThanDeadlocking() async {
        let store = Store()
        let results = Recorder<Bool>()
        let second = Receptionist<Int>(on: store, buffering: .waiting(capacity: 1)) { store, value in
            store.add(value)
        }
        let first = Receptionist<Int>(on: store) { _, _ in
            for value in 1...3 { results.append(second.send(value).isAccepted) }
        }
        first.send(0)
        #expect(await waitUntilAsync(seconds: 60) { results.count == 3 }, "the task block returned")
        #expect(results.values.first == true)
        #expect(results.values.contains(false), "a send that would wait on the actor was refused")
        second.finish()
        #expect(await waitUntilAsync { second.isFinished })
        #expect(await store.received.count == results.values.filter { $0 }.count)
        first.cancel()
    }

    @Test func aSendFromTheMainActorIntoAFullMainActorReceptionistIsRefused() async {
        let results = Recorder<Bool>()
        let seen = Recorder<Int>()
        let second = Receptionist<Int>(on: .mainActor, buffering: .waiting(capacity: 1)) { seen.append($0) }
        let first = Receptionist<Int>(on: .mainActor) { _ in
            for value in 1...3 { results.append(second.send(value).isAccepted) }
        }
        first.send(0)
        #expect(await waitUntilAsync(seconds: 60) { results.count == 3 }, "the task block returned")
        #expect(results.values.contains(false))
        second.finish()
        #expect(await waitUntilAsync { second.isFinished })
        #expect(seen.count == results.values.filter { $0 }.count)
        first.cancel()
    }

    /// From a task, a synchronous send into a full actor receptionist is refused: blocking a
    /// thread of the concurrency pool could starve the actor's drain.
    @Test func aSynchronousSendFromATaskIntoAFullActorReceptionistIsRefused() async {
        let store = Store()
        let gate = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: store, buffering: .waiting(capacity: 1)) { store, value in
            if value == 0 { gate.wait() }  // holds the drain
            store.add(value)
        }
        receptionist.send(0)
        #expect(await waitUntilAsync { receptionist.statistics.inFlight == 1 })
        let results = await Task.detached { [1, 2].map { receptionist.send($0) } }.value
        #expect(results == [.accepted, .refused(.waitingWouldDeadlock)])
        gate.signal()
        receptionist.finish()
        #expect(await waitUntilAsync { receptionist.isFinished })
        #expect(await store.received == [0, 1])
    }

    /// A staged pipeline to an actor, fed by tasks with `sendSuspending`: everything arrives,
    /// in order per producer, and the tasks never block a pool thread.
    @Test func tasksFeedingAStagedActorPipelineSuspendAndLoseNothing() async {
        let store = Store()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { $0 }
            .deliver(on: store, buffering: .waiting(capacity: 2)) { store, value in store.add(value) }
        await withTaskGroup(of: Void.self) { group in
            for producer in 0..<4 {
                group.addTask {
                    for sequence in 0..<500 {
                        let accepted = await receptionist.sendSuspending(stamp(producer, sequence))
                        precondition(accepted.isAccepted)
                    }
                }
            }
        }
        receptionist.finish()
        #expect(await waitUntilAsync { receptionist.isFinished })
        let checker = OrderChecker()
        for value in await store.received { checker.record(value) }
        #expect(checker.report == OrderChecker.Report(received: 2_000, duplicatedOrReordered: 0, gaps: 0))
    }
}

/// Where waiting would deadlock in less direct ways: nested drains, queue hierarchies.
extension StagedWaitingTests {
    /// R1's task block fills R1, then sends to R2, whose drain runs inline (nested) and whose task
    /// block sends to the full R1: the outer drain is R1's, so that send is refused.
    @Test func aSendFromANestedDrainIntoAnOuterFullReceptionistIsRefused() {
        let results = Recorder<Bool>()
        let holder = Locked<(Receptionist<Int>, Receptionist<Int>)?>(uncounted: nil)
        let first = Receptionist<Int>(on: .immediate, buffering: .waiting(capacity: 1)) { value in
            guard value == 0, let (first, second) = holder.withLock({ $0 }) else { return }
            first.send(1)  // fills the buffer: this drain is busy with 0
            second.send(0)
        }
        let second = Receptionist<Int>(on: .immediate, buffering: .waiting(capacity: 1)) { _ in
            guard let (first, _) = holder.withLock({ $0 }) else { return }
            results.append(first.send(2).isAccepted)  // the drain that would make room is the outer one
        }
        holder.withLock { $0 = (first, second) }
        let returned = finishesWithoutDeadlock { first.send(0) }
        #expect(returned == .accepted, "no deadlock")
        #expect(results.values == [false])
        holder.withLock { $0 = nil }
    }

    /// Queue C targets queue D, and both are targets of waiting receptionists: code on C runs on
    /// D too, so a send from C into D's full receptionist is refused (C's own mark must not hide
    /// D's).
    @Test func aSendFromAQueueThatTargetsTheTargetIsRefused() {
        let outer = DispatchQueue(label: "StagedWaitingTests.D")
        let inner = DispatchQueue(label: "StagedWaitingTests.C", target: outer)
        let onInner = Receptionist<Int>(on: inner, buffering: .waiting(capacity: 1)) { _ in }
        let onOuter = Receptionist<Int>(on: outer, buffering: .waiting(capacity: 1)) { _ in }
        let results = finishesWithoutDeadlock { inner.sync { [onOuter.send(0), onOuter.send(1)] } }
        #expect(results == [.accepted, .refused(.waitingWouldDeadlock)])
        onOuter.finish()
        onInner.finish()
        #expect(waitUntil { onOuter.isFinished && onInner.isFinished })
    }

    /// `finish()` refuses the senders waiting at a staged pipeline's intake at once, while the
    /// consumer is held.
    @Test func finishReleasesSendersWaitingAtTheIntake() {
        let target = ManualTarget()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .map { $0 }
            .deliver(on: target, buffering: .waiting(capacity: 1)) { _ in }
        let results = Recorder<Bool>()
        let producers = 3
        for _ in 0..<producers {
            Thread {
                var sent = 0
                while receptionist.send(sent).isAccepted { sent += 1 }
                results.append(false)
            }.start()
        }
        #expect(waitUntil { (receptionist.intakeStatistics?.waits ?? 0) >= producers })
        receptionist.finish()
        // Every producer waits at the intake (the stages never wait), and finish refuses them
        // all without the consumer running.
        #expect(waitUntil(seconds: 30) { results.count == producers }, "released without a drain")
        #expect(
            waitUntil {
                target.runAll()
                return receptionist.isFinished
            })
    }
}
