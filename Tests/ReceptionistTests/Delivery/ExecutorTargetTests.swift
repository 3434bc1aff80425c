import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// What task blocks saw on a ``ToyEventLoop``: the values, in order, and whether each ran on the
/// loop, one at a time.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class LoopRecorder: Sendable {
    let loop: ToyEventLoop
    private let seen = Locked<[Int]>(uncounted: [])
    private let offLoop = AtomicValue<Int>(0)
    private let running = AtomicValue<Int>(0)
    private let overlaps = AtomicValue<Int>(0)

    init(_ loop: ToyEventLoop) {
        self.loop = loop
    }

    func record(_ value: Int) {
        if running.add(1, ordering: .acquiringAndReleasing).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
        if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
        seen.withLock { $0.append(value) }
        running.subtract(1, ordering: .acquiringAndReleasing)
    }

    var values: [Int] { seen.withLock { $0 } }
    /// Task blocks that ran off the loop.
    var offLoopCount: Int { offLoop.load(ordering: .relaxed) }
    /// Task blocks that started while another was running.
    var overlapCount: Int { overlaps.load(ordering: .relaxed) }
}

/// An actor of the user's whose executor is the loop: a task block on the loop may enter it
/// synchronously.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
actor LoopBoundStore {
    let loop: ToyEventLoop
    var values: [Int] = []

    init(_ loop: ToyEventLoop) {
        self.loop = loop
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func append(_ value: Int) { values.append(value) }
}

/// Waits for `semaphore` on a thread of its own: the test's task holds no thread of the
/// cooperative pool meanwhile, which the target's jobs need to start (a failure guard of
/// `seconds`, never a timing assumption).
func signalled(_ semaphore: DispatchSemaphore, seconds: Double = 120) async -> Bool {
    await onOwnThread { wait(semaphore, seconds: seconds) }
}

/// Any `SerialExecutor` as a target (`ExecutorTarget`, `.executor(e)`): task blocks and resume
/// blocks run on the executor, in order, exactly once, never inline.
@Suite struct ExecutorTargetTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func taskBlocksRunOnTheExecutorInOrderExactlyOnce() async {
        let loop = ToyEventLoop()
        let recorder = LoopRecorder(loop)
        // The loop is held while the burst accumulates, so its drains run one after another.
        let held = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        loop.execute {
            held.signal()
            gate.wait()
        }
        #expect(await signalled(held))
        let receptionist = Receptionist<Int>(on: .executor(loop)) { recorder.record($0) }
        let count = 10_000
        for value in 0..<count { receptionist.send(value) }
        let ended = DispatchSemaphore(value: 0)
        receptionist.finish { ended.signal() }
        gate.signal()
        #expect(await signalled(ended))
        #expect(recorder.values == Array(0..<count), "every block once, in order")
        #expect(recorder.offLoopCount == 0, "every block on the executor")
        #expect(recorder.overlapCount == 0)
        // One job per drain, not per change: each drain runs its budget of 256 blocks, then
        // resubmits itself, which the next job runs.
        #expect((1...(count + 255) / 256).contains(loop.jobsRun), "\(loop.jobsRun) jobs")
        #expect(loop.shutdown())
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func workSubmittedToOneTargetRunsInSubmissionOrderNeverInline() async {
        let loop = ToyEventLoop()
        let target = ExecutorTarget(loop)
        #expect(target.executor === loop)
        let order = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            // Already on the executor: enqueued, run after this closure returns.
            target.submit { order.append("a \(loop.inEventLoop)") }
            target.submit { order.append("b \(loop.inEventLoop)") }
            target.submit {
                // Submitted by a job: runs in the next job, after this one's work.
                target.submit {
                    order.append("d \(loop.inEventLoop)")
                    done.signal()
                }
                order.append("c \(loop.inEventLoop)")
            }
            order.append("submitter returned")
        }
        #expect(await signalled(done))
        #expect(order.values == ["submitter returned", "a true", "b true", "c true", "d true"])
        #expect(target.jobs.waitingCount == 0)
        #expect(loop.shutdown())
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func nothingIsDeliveredAfterCancelReturns() async {
        let loop = ToyEventLoop()
        let target = ExecutorTarget(loop)
        let recorder = LoopRecorder(loop)
        let cancelled = AtomicValue<Bool>(false)
        let late = AtomicValue<Int>(0)
        let receptionist = Receptionist<Int>(on: target) { value in
            if cancelled.load(ordering: .acquiring) { late.add(1, ordering: .relaxed) }
            recorder.record(value)
        }
        for value in 0..<10_000 { receptionist.send(value) }
        receptionist.cancel()
        cancelled.store(true, ordering: .releasing)
        // Work submitted to the target after the cancel runs after every drain submitted
        // before it has returned (a drain running now ends its job first).
        let marker = DispatchSemaphore(value: 0)
        target.submit { marker.signal() }
        #expect(await signalled(marker))
        // One drain may have started its block before cancel returned; none after it.
        #expect(late.load(ordering: .relaxed) <= 1)
        #expect(receptionist.isCancelled)
        let values = recorder.values
        #expect(values == Array(0..<values.count), "whatever arrived, arrived in order")
        #expect(recorder.offLoopCount == 0)
        #expect(receptionist.statistics.inFlight == 0)
        #expect(loop.shutdown())
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func whenWritableRunsOnTheExecutorAfterTheProducerReturns() async {
        let loop = ToyEventLoop()
        let events = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: .executor(loop)) { _ in }
        loop.execute {
            // Not paused: the block runs at once, that is, in a job after this closure returns.
            receptionist.whenWritable(on: .executor(loop)) {
                events.append("resumed on the loop: \(loop.inEventLoop)")
                done.signal()
            }
            events.append("registered")
        }
        #expect(await signalled(done))
        #expect(events.values == ["registered", "resumed on the loop: true"])
        receptionist.cancel()
        #expect(loop.shutdown())
    }

    /// `whenWritable(on: .executor(e))` takes any `SerialExecutor` (as swift-nio's
    /// `channel.eventLoop.executor` is), on a receptionist, an observation and a subscription.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func whenWritableTakesAnyExecutor() async {
        let loop = ToyEventLoop()
        let executor: any SerialExecutor = loop
        let resumed = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: DispatchQueue(label: "ExecutorTargetTests.direct")) { _ in }
        let box = ObservableValue(0)
        let token = box.receptionist().deliver(on: .immediate) { _ in }
        let hub = Hub()
        let subscription = hub.subscribe(to: .numbers, on: .immediate) { _ in }
        loop.execute {
            receptionist.whenWritable(on: .executor(executor)) { resumed.append("receptionist \(loop.inEventLoop)") }
            token.whenWritable(on: .executor(executor)) { resumed.append("observation \(loop.inEventLoop)") }
            subscription.whenWritable(on: .executor(executor)) {
                resumed.append("subscription \(loop.inEventLoop)")
                done.signal()
            }
            resumed.append("registered")
        }
        #expect(await signalled(done))
        #expect(await waitUntilAsync { resumed.count == 4 })
        let values = resumed.values
        #expect(values.first == "registered", "never inline")
        #expect(Set(values) == ["registered", "receptionist true", "observation true", "subscription true"])
        receptionist.cancel()
        token.cancel()
        subscription.cancel()
        #expect(loop.shutdown())
    }

    /// A producer on the loop, paused by the high watermark: its resume blocks run on the loop,
    /// in the order it registered them, after the drain whose step took the backlog down, never
    /// inside the producer's own code.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aPausedProducerOnTheExecutorIsResumedThereInOrder() async {
        let loop = ToyEventLoop()
        let target = ExecutorTarget(loop)
        let events = Recorder<String>()
        let done = DispatchSemaphore(value: 0)
        let receptionist = Receptionist<Int>(on: target, buffering: .watermarks(low: 1, high: 4)) { value in
            events.append("block \(value)")
        }
        loop.execute {
            var value = 0
            while !receptionist.send(value).shouldPause { value += 1 }
            for name in ["a", "b", "c"] {
                receptionist.whenWritable(on: target) {
                    events.append("resume \(name) \(loop.inEventLoop)")
                    if name == "c" { done.signal() }
                }
            }
            events.append("producer returned")
        }
        #expect(await signalled(done))
        #expect(
            events.values == [
                "producer returned", "block 0", "block 1", "block 2", "block 3", "resume a true", "resume b true",
                "resume c true",
            ])
        #expect(receptionist.isWritable)
        receptionist.cancel()
        #expect(loop.shutdown())
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func pipelinesObservationsHubsAndObserverSetsDeliverOnTheExecutor() async {
        let loop = ToyEventLoop()
        let recorder = LoopRecorder(loop)

        let pipeline = Receptionist.pipeline(of: Int.self)
            .map { $0 * 10 }
            .deliver(on: .executor(loop)) { recorder.record($0) }
        for value in 1...3 { pipeline.send(value) }
        let pipelineEnded = DispatchSemaphore(value: 0)
        pipeline.finish { pipelineEnded.signal() }
        #expect(await signalled(pipelineEnded))

        let box = ObservableValue(0)
        let token = box.receptionist().deliver(on: .executor(loop)) { recorder.record($0.newValue) }
        for value in 4...5 { box.value = value }
        token.finish()
        #expect(await waitUntilAsync(seconds: 240) { token.isFinished })

        let hub = Hub()
        let subscription = hub.subscribe(to: .numbers, on: .executor(loop)) { recorder.record($0 * 100) }
        hub.post(.numbers, 6)
        subscription.finish()
        #expect(await waitUntilAsync(seconds: 240) { subscription.isFinished })

        let observers = ObserverSet<LoopObserver>()
        let observer = LoopObserver(recorder)
        observers.add(observer, on: .executor(loop))
        observers.notify { $0.note(7) }
        let observersEnded = DispatchSemaphore(value: 0)
        observers.finish { observersEnded.signal() }
        #expect(await signalled(observersEnded))
        withExtendedLifetime(observer) {}

        #expect(recorder.values == [10, 20, 30, 4, 5, 600, 7])
        #expect(recorder.offLoopCount == 0)
        #expect(loop.shutdown())
    }

    /// The task block runs in a task whose executor is the loop, so an actor of the user's on
    /// the same executor is entered with `assumeIsolated`, without a hop.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func anActorOnTheSameExecutorIsEnteredSynchronously() async {
        let loop = ToyEventLoop()
        let store = LoopBoundStore(loop)
        let receptionist = Receptionist<Int>(on: .executor(loop)) { value in
            store.assumeIsolated { $0.append(value) }
        }
        for value in 0..<100 { receptionist.send(value) }
        let ended = DispatchSemaphore(value: 0)
        receptionist.finish { ended.signal() }
        #expect(await signalled(ended))
        #expect(await store.values == Array(0..<100))
        #expect(loop.shutdown())
    }

    /// With `.waiting(capacity:)`, a send that finds the buffer full is refused where it runs in
    /// a Swift task or on the executor (which could then never run the drain it waits for), and
    /// waits elsewhere.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aWaitingSendIsRefusedOnTheExecutorAndInATask() async {
        let loop = ToyEventLoop()
        let receptionist = Receptionist<Int>(on: .executor(loop), buffering: .waiting(capacity: 2)) { _ in }

        // On the loop, outside any task: the toy loop answers `isIsolatingCurrentContext()`.
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            let results = Locked<[SendResult]>(uncounted: [])
            let sent = DispatchSemaphore(value: 0)
            loop.execute {
                for value in 0..<3 {
                    let result = receptionist.send(value)
                    results.withLock { $0.append(result) }
                }
                sent.signal()
            }
            #expect(await signalled(sent))
            #expect(results.withLock { $0 } == [.accepted, .accepted, .refused(.waitingWouldDeadlock)])
            #expect(await waitUntilAsync { receptionist.statistics.delivered == 2 })
        }

        // In a task (this test's), with the loop held so that the buffer stays full.
        let held = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        loop.execute {
            held.signal()
            gate.wait()
        }
        #expect(await signalled(held))
        #expect(receptionist.send(10) == .accepted)
        #expect(receptionist.send(11) == .accepted)
        #expect(receptionist.send(12) == .refused(.waitingWouldDeadlock))
        // On a thread of its own, outside any task and off the loop: the send waits for room,
        // which the drain makes once the loop is let go (after the send started waiting).
        let waitsBefore = receptionist.statistics.waits
        let result = await onOwnThread {
            Thread {
                _ = waitUntil { receptionist.statistics.waits > waitsBefore }
                gate.signal()
            }.start()
            return receptionist.send(13)
        }
        #expect(result == .accepted)
        #expect(receptionist.statistics.waits == waitsBefore + 1)
        receptionist.cancel()
        #expect(loop.shutdown())
    }
}

/// An observer whose messages the set bounces to the loop.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class LoopObserver: Sendable {
    let recorder: LoopRecorder

    init(_ recorder: LoopRecorder) {
        self.recorder = recorder
    }

    func note(_ value: Int) { recorder.record(value) }
}
