import Dispatch
import Foundation
import Testing

@testable import Receptionist

#if canImport(Glibc)
import Glibc
#endif

extension Stress {
    /// Many `.waiting` pipelines with slow consumers at once (issue 26): with the stages waiting
    /// for room on Dispatch's worker threads, a thousand of them exhausted the worker pool and
    /// none finished. The stages no longer wait (``DrainGate``): every pipeline finishes, nothing
    /// is lost, each keeps its order, and the process's threads stay bounded. A watchdog reports
    /// a deadlock as a failure naming the pipelines that did not finish, instead of hanging.
    @Suite(.serialized, .tags(.stress))
    struct ManyWaitingPipelinesStressTests {
        /// The reproduction of the issue: 1 000 pipelines `map → batch(count: 3, every: 5 ms)` on
        /// 1 000 serial queues, `.waiting(capacity: 1)`, each consumer sleeping 10 ms per element,
        /// each fed 30 elements by `sendSuspending` from a task of its own, then finished. (The
        /// issue's consumers slept 2 ms; here the code before the gate hung with 10 ms, not 2: it
        /// never finished in 300 s. With the gate: about 1.3 s, 260 threads at the peak.)
        @Test func aThousandPipelinesFedByTasksAllFinish() async {
            let run = ManyPipelines(count: scaled(1_000), elements: 30)
            let threads = ThreadCountSampler()
            let watchdog = run.startWatchdog(seconds: 240, noteAfter: 120)
            // The feeders run on their own, so that the watchdog also covers a deadlock while
            // they send (before the gate, the task group itself never finished).
            let feeding = Task {
                await withTaskGroup(of: Void.self) { group in
                    for index in 0..<run.count {
                        group.addTask {
                            let pipeline = run.pipelines[index]
                            for element in 0..<run.elements { _ = await pipeline.sendSuspending(element) }
                            pipeline.finish()
                        }
                    }
                }
            }
            await run.check(watchdog, threads: threads, context: "fed by tasks")
            await feeding.value  // after a deadlock, the watchdog cancelled every pipeline: the sends return
        }

        /// The same pipelines fed synchronously by 50 threads, each sending to 20 of them in turn
        /// (blocking whenever one is full).
        @Test func aThousandPipelinesFedByThreadsAllFinish() async {
            let run = ManyPipelines(count: scaled(1_000), elements: 30)
            let threads = ThreadCountSampler()
            let watchdog = run.startWatchdog(seconds: 240, noteAfter: 120)
            let feeders = min(50, run.count)
            let feeding = Task {
                await onOwnThread {
                    onThreads(feeders) { feeder in
                        let mine = Array(stride(from: feeder, to: run.count, by: feeders))
                        for element in 0..<run.elements {
                            for index in mine { _ = run.pipelines[index].send(element) }
                        }
                        for index in mine { run.pipelines[index].finish() }
                    }
                }
            }
            await run.check(watchdog, threads: threads, context: "fed by threads")
            await feeding.value
        }
    }
}

/// The pipelines of one run and what their consumers received.
private final class ManyPipelines: Sendable {
    let count: Int
    let elements: Int
    let pipelines: [Receptionist<Int>]
    /// What each consumer received, in order.
    let received: [Recorder<Int>]
    /// One entry per pipeline that ended.
    let ended = Recorder<Int>()

    init(count: Int, elements: Int) {
        self.count = count
        self.elements = elements
        let received = (0..<count).map { _ in Recorder<Int>() }
        self.received = received
        let ended = self.ended
        pipelines = (0..<count).map { index in
            let queue = DispatchQueue(label: "many-pipelines.\(index)")
            let receptionist = Receptionist.pipeline(of: Int.self)
                .map { $0 }
                .batch(count: 3, every: .milliseconds(5))
                .deliver(on: queue, buffering: .waiting(capacity: 1)) { batch in
                    for element in batch {
                        usleep(10_000)  // the slow consumer: 10 ms per element
                        received[index].append(element)
                    }
                }
            return receptionist
        }
        for (index, pipeline) in pipelines.enumerated() {
            pipeline.deliveryControl.whenEnded { ended.append(index) }
        }
    }

    /// Starts a watchdog on a thread of its own (a deadlock may hold every thread of the
    /// cooperative pool, and with them any async wait): if the pipelines have not all ended after
    /// `seconds`, it notes which and how far they got, then cancels them all, which releases
    /// their blocked senders, so that the test can go on and report it.
    ///
    /// After `noteAfter` seconds it prints where the unfinished pipelines stand, once: a run
    /// that then finishes was slow (a loaded machine), not deadlocked, and the note says how
    /// slow; one that does not has its state printed twice, `seconds - noteAfter` apart.
    func startWatchdog(seconds: Double, noteAfter: Double) -> Watchdog {
        let watchdog = Watchdog()
        let thread = Thread { [self] in
            let start = DispatchTime.now()
            let deadline = start + seconds
            var noted = false
            while ended.count < count {
                if !noted && DispatchTime.now() > start + noteAfter {
                    noted = true
                    print("ManyWaitingPipelines: not all ended after \(Int(noteAfter)) s: \(progress())")
                }
                guard DispatchTime.now() < deadline else {
                    let report = progress()
                    watchdog.report.withLock {
                        $0 = "deadlock: not all pipelines finished within \(Int(seconds)) s: \(report)"
                    }
                    for pipeline in pipelines { pipeline.cancel() }
                    break
                }
                usleep(10_000)
            }
            if noted {
                let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
                print(
                    "ManyWaitingPipelines: watchdog stopped after \(Int(elapsed)) s, \(ended.count) of \(count) ended")
            }
            watchdog.stopped.signal()
        }
        thread.stackSize = 1 << 18
        thread.start()
        return watchdog
    }

    /// How far the run got, and where the first unfinished pipelines stand: their counters on
    /// both sides of the stages, and the gate between them.
    private func progress() -> String {
        let unfinished = (0..<count).filter { !pipelines[$0].isFinished }
        let delivered = received.reduce(0) { $0 + $1.count }
        var text =
            "\(unfinished.count) of \(count) unfinished, \(delivered) of \(count * elements) elements delivered; "
            + "first unfinished: \(Array(unfinished.prefix(5)))"
        for index in unfinished.prefix(3) {
            let pipeline = pipelines[index]
            text += "\n  #\(index) received \(received[index].count): \(pipeline.statistics)"
            if let staged = pipeline.stagedPipeline {
                text +=
                    "\n    intake: \(staged.intake.statistics), lifecycle \(staged.intake.lifecycle), "
                    + "drain scheduled \(staged.intake.state.withLock { $0.isDrainScheduled })"
                if let gate = staged.intake.gate {
                    text +=
                        "\n    gate: parked \(gate.parked.load(ordering: .sequentiallyConsistent)), "
                        + "outstanding \(gate.outstanding.load(ordering: .sequentiallyConsistent)), "
                        + "taken \(gate.taken.load(ordering: .relaxed)), "
                        + "cancelled \(gate.cancelled.load(ordering: .sequentiallyConsistent))"
                }
            }
        }
        return text
    }

    /// Waits for the watchdog (every pipeline ended, or it gave up and cancelled them), then
    /// checks each pipeline's deliveries and the peak thread count.
    func check(_ watchdog: Watchdog, threads: ThreadCountSampler, context: String) async {
        await onOwnThread { watchdog.stopped.wait() }
        let peak = threads.stop()
        if let report = watchdog.report.withLock({ $0 }) {
            Issue.record(Comment(rawValue: "\(context): \(report)"))
            return
        }
        var wrong = 0
        for index in 0..<count where received[index].values != Array(0..<elements) { wrong += 1 }
        #expect(wrong == 0, "\(context): \(wrong) pipelines lost, duplicated or reordered elements")
        for pipeline in pipelines {
            let statistics = pipeline.statistics
            if statistics.dropped != 0 || statistics.discarded != 0 {
                Issue.record("\(context): a pipeline dropped or discarded elements: \(statistics)")
                break
            }
        }
        // Dispatch's worker pool (at most 255 threads on Linux, most of them sleeping in the slow
        // consumers), the cooperative pool, the test's own threads and the feeders: not one
        // thread per pipeline.
        #expect(peak < 600, "\(context): \(peak) threads at the peak for \(count) pipelines")
    }
}

/// What a run's watchdog found.
private final class Watchdog: Sendable {
    /// The deadlock it reported, if it gave up.
    let report = Locked<String?>(nil)
    /// Signalled once it stopped watching.
    let stopped = DispatchSemaphore(value: 0)
}

/// Samples the process's thread count every millisecond until stopped; the peak.
private final class ThreadCountSampler: Sendable {
    private let peak = AtomicValue<Int>(0)
    private let stopped = AtomicValue<Bool>(false)
    private let ended = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let count = Self.threadCount()
                if count > peak.load(ordering: .relaxed) { peak.store(count, ordering: .relaxed) }
                usleep(1_000)
            }
            ended.signal()
        }
        thread.stackSize = 1 << 18
        thread.start()
    }

    func stop() -> Int {
        stopped.store(true, ordering: .relaxed)
        ended.wait()
        return peak.load(ordering: .relaxed)
    }

    /// `Threads:` of /proc/self/status; 0 where it cannot be read.
    static func threadCount() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }
}
