// The rows measured with the library: lossless receptionists on each kind of target (an actor
// among them), lossless and coalescing observations of a property, a snapshot of two properties
// (written one at a time or by a transaction), a batching pipeline, and a bounded and a waiting
// buffer under a flood. Each one does the consumer's work (Harness.swift) and checks what the
// library reports.

import Dispatch
import Foundation
import Receptionist

/// Which table a row belongs to.
enum Section: String, Codable, CaseIterable, Sendable {
    /// As fast as the producers can go, consumer doing the minimum.
    case throughput
    /// Producers pause ~100 µs between changes: the consumer keeps up; latency is the figure.
    case paced
    /// Producers flood, the consumer is slow (1 µs of work per change): peak memory is the figure.
    case flood
    /// As `flood`, with 1, 2 or 8 producers and `.waiting` policies behind stages: peak memory
    /// must not grow with the producers.
    case backPressure = "back-pressure"
    /// 1, 2, 4, 8, 16 and 64 producers flat out: the cost per change must not grow with P (a lock
    /// that collapses when threads outnumber cores would show here).
    case contention
    /// A log pipeline: 1, 2, 16 and 64 producers into `batch` with back-pressure, and a consumer
    /// that writes each batch to a file; beside the hand-written bounded queue.
    case ingest
    /// 4 writers flat out into three pipelines with stages, from observations or a hub channel:
    /// how old the quotes shown get, how late the last delivery comes, and memory. And one producer
    /// that must not block (`nonblocking-*`): watermarks and pauses beside `.waiting`, unbounded,
    /// `.dropNewest` and the hand-written floor.
    case flowControl = "flow-control"
    /// 4 writers flat out into the same three pipelines, written two ways: an `@Observed`
    /// property observed three times, and a `Hub` channel posted to (ObservedVersusHubRows.swift):
    /// the writers' time, the total time and memory, observed over hub.
    case writers
}

/// What a row is, for the ratios and the report.
enum Kind: String, Codable, Sendable {
    case library
    case baseline
    case floor
}

/// One row of the benchmark: what it is and how to run it once.
struct Scenario: Sendable {
    /// Stable identifier of the mechanism, shared by its rows in every section ("receptionist-dispatch").
    let key: String
    let name: String
    let kind: Kind
    let section: Section
    let spec: RunSpec
    let run: @Sendable (RunSpec) -> Measurement

    /// Identifies the row among all rows.
    var id: String { "\(section.rawValue)/\(key)/\(spec.producers)" }
}

/// A model with one observed property, for the coalescing rows.
final class Gauge: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored property is an @Observed (a reference to a locked box).
    @Observed var latest = Event.initial
}

/// A model with two observed properties, for the lossless `@Observed` and snapshot rows: the
/// producers write `left` in both, so that the rows differ only in what observes it.
final class Pair: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed (a reference to storage under the
    // model's lock).
    @Observed var left = Event.initial
    @Observed var right = Event.initial
}

/// The actor of the actor rows (a receptionist onto it, a task per change, an `AsyncStream`
/// consumed in it): it owns the row's consumer and counts the changes in its own state, which the
/// task block uses synchronously, isolated to the actor, as a user's would.
actor Sink {
    let consumer: Consumer
    private(set) var received = 0

    init(_ consumer: Consumer) {
        self.consumer = consumer
    }

    func receive(_ event: Event) {
        received &+= 1
        consumer.receive(event)
    }

    /// Consumes `stream` on the actor: `for await` in an isolated method resumes the iteration on
    /// the actor (`next(isolation:)`), without a hop per change.
    func consume(_ stream: AsyncStream<Event>) async {
        for await event in stream { receive(event) }
    }

    /// ``received``, read from a thread outside the concurrency runtime (the benchmark thread):
    /// waits up to 10 s for the actor; `nil` if it did not answer.
    nonisolated func receivedFromOutside() -> Int? {
        let answer = SinkAnswer()
        Task {
            let received = await self.received
            answer.value.withLock { $0 = received }
            answer.done.signal()
        }
        guard answer.done.wait(timeout: .now() + 10) == .success else { return nil }
        return answer.value.withLock { $0 }
    }

    /// Checks that the actor counted every change once.
    nonisolated func checkReceived(_ changes: Int, _ measurement: inout Measurement) {
        let received = receivedFromOutside()
        measurement.check(
            received == changes,
            "the actor counted \(received.map(String.init) ?? "nothing (no answer within 10 s)") of \(changes) changes")
    }
}

/// Carries ``Sink/received`` from the actor to the benchmark thread.
private final class SinkAnswer: Sendable {
    let value = Protected(-1)
    let done = DispatchSemaphore(value: 0)
}

enum LibraryRows {
    /// `Receptionist<Event>(on: queue)`, lossless: the case the library exists for.
    static func receptionistDispatch(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist<Event>(on: CountingTarget(queue, hops)) { consumer.receive($0) }
        return finish(receptionist, hops: hops, runProducers(spec, consumer: consumer) { receptionist.send($0) })
    }

    /// The same, each producer handing its changes on 64 at a time with `send(contentsOf:)`: one
    /// lock step per 64 (what a reader that gets many messages per read does). The producer's
    /// own batching (appending to an array) is part of the measured cost.
    static func receptionistDispatchContents(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist<Event>(on: CountingTarget(queue, hops)) { consumer.receive($0) }
        let batches = ProducerBatches(producers: spec.producers, size: 64)
        let run = runProducers(
            spec, consumer: consumer,
            send: { batches.append($0) { receptionist.send(contentsOf: $0) } },
            thenHandOn: { batches.sendRest { receptionist.send(contentsOf: $0) } })
        return finish(receptionist, hops: hops, run)
    }

    /// The same, onto an `OperationQueue` that runs one operation at a time.
    static func receptionistOperation(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let receptionist = Receptionist<Event>(on: CountingTarget(queue, hops)) { consumer.receive($0) }
        return finish(receptionist, hops: hops, runProducers(spec, consumer: consumer) { receptionist.send($0) })
    }

    /// The same, onto a `SerialExecutor` (`.executor(loop)`): a toy event loop, one thread
    /// running its jobs in order, as a swift-nio event loop's executor does. Each drain is a job
    /// (a task entering the executor); the hops are counted around the library's target.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    static func receptionistExecutor(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let loop = BenchmarkEventLoop()
        let receptionist = Receptionist<Event>(on: CountingTarget(ExecutorTarget(loop), hops)) { consumer.receive($0) }
        var measurement = finish(
            receptionist, hops: hops, runProducers(spec, consumer: consumer) { receptionist.send($0) })
        // The loop stops once the receptionist has ended (its last job returned).
        let ended = DispatchSemaphore(value: 0)
        receptionist.finish { ended.signal() }
        measurement.check(ended.wait(timeout: .now() + 10) == .success, "the receptionist did not end within 10 s")
        loop.shutdown()
        return measurement
    }

    /// The same, with `Receptionist(on: .mainActor)`: drains on the main queue, the task block
    /// isolated to the main actor. The library's own target, so its hops are not counted (a
    /// wrapper that counted them would replace what the row measures).
    static func receptionistMain(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let receptionist = Receptionist<Event>(on: .mainActor) { event in consumer.receive(event) }
        return finish(receptionist, hops: nil, runProducers(spec, consumer: consumer) { receptionist.send($0) })
    }

    /// The same with ``MainThreadBudget`` on (a budget no task block overruns): every task block
    /// on the main queue is timed, one clock read per change.
    static func receptionistMainBudgeted(_ spec: RunSpec) -> Measurement {
        MainThreadBudget.reportTaskBlocks(longerThan: .seconds(10)) { slow in print("unexpected: \(slow)") }
        defer { MainThreadBudget.stopReporting() }
        return receptionistMain(spec)
    }

    /// `Receptionist<Event>(on: actor) { actor, event in … }`, lossless: the task block runs
    /// isolated to the actor (the library runs one task per burst on it) and uses its state
    /// synchronously. The drains are the library's own tasks, so its hops are not counted (it
    /// would take replacing the target the row measures).
    static func receptionistActor(_ spec: RunSpec) -> Measurement {
        let sink = Sink(Consumer(spec))
        let receptionist = Receptionist<Event>(on: sink) { sink, event in sink.receive(event) }
        var measurement = finish(
            receptionist, hops: nil, runProducers(spec, consumer: sink.consumer) { receptionist.send($0) })
        sink.checkReceived(spec.changes, &measurement)
        return measurement
    }

    /// An `@Observed` property hammered by the producers, observed with `.coalesce()`: the
    /// consumer must see a chain of increasing values that ends on the property's final value.
    static func coalesceObserved(_ spec: RunSpec) -> Measurement {
        let gauge = Gauge()
        return coalescing(
            spec, write: { gauge.latest = $0 }, read: { gauge.latest },
            observe: { target, consumer in
                gauge.receptionist(for: \.latest)
                    .coalesce()
                    .deliver(on: target) { change in
                        consumer.receive(old: change.oldValue!, new: change.newValue, changes: change.coalescedCount)
                    }
            })
    }

    /// The same with the box as a `let` (``ObservableValue``), the model form that is checked
    /// `Sendable`: no property wrapper, so no dynamic exclusivity check on each write.
    static func coalesceBox(_ spec: RunSpec) -> Measurement {
        let box = ObservableValue(Event.initial)
        return coalescing(
            spec, write: { box.value = $0 }, read: { box.value },
            observe: { target, consumer in
                box.receptionist()
                    .coalesce()
                    .deliver(on: target) { change in
                        consumer.receive(old: change.oldValue!, new: change.newValue, changes: change.coalescedCount)
                    }
            })
    }

    /// An `@Observed` property written by the producers, observed losslessly: every write is
    /// delivered once, in order, each change's old value the previous change's new value.
    static func observedLossless(_ spec: RunSpec) -> Measurement {
        let model = Pair()
        return lossless(
            spec, write: { model.left = $0 }, read: { model.left },
            observe: { target, consumer in
                model.receptionist(for: \.left)
                    .deliver(on: target) { change in
                        consumer.receive(old: change.oldValue!, new: change.newValue, changes: change.coalescedCount)
                    }
            })
    }

    /// The same with a standalone box (``ObservableValue``).
    static func boxLossless(_ spec: RunSpec) -> Measurement {
        let box = ObservableValue(Event.initial)
        return lossless(
            spec, write: { box.value = $0 }, read: { box.value },
            observe: { target, consumer in
                box.receptionist()
                    .deliver(on: target) { change in
                        consumer.receive(old: change.oldValue!, new: change.newValue, changes: change.coalescedCount)
                    }
            })
    }

    static func lossless(
        _ spec: RunSpec,
        write: @escaping @Sendable (Event) -> Void,
        read: () -> Event,
        observe: (CountingTarget<DispatchQueue>, Consumer) -> ObservationToken
    ) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let token = observe(CountingTarget(DispatchQueue(label: "benchmark.consumer"), hops), consumer)
        var measurement = runProducers(spec, consumer: consumer, send: write)
        measurement.hops = hops.value
        let final = read()
        measurement.finalValueMissed = consumer.last != final
        measurement.check(
            consumer.last == final,
            "the last change delivered is not the final value: delivered \(consumer.last.value), property \(final.value)"
        )
        measurement.check(
            consumer.deliveries == spec.changes, "\(consumer.deliveries) changes delivered, \(spec.changes) written")
        checkLossless(token.statistics, spec.changes, &measurement)
        token.finish()
        return measurement
    }

    /// Producers write `left` of a two-property model observed as a snapshot of both
    /// (`receptionist(for: \.left, \.right)`): one change per write, in order, each old snapshot
    /// the previous new one. Directly comparable with ``observedLossless(_:)``.
    static func snapshot(_ spec: RunSpec) -> Measurement {
        let model = Pair()
        return snapshotRow(spec, model: model, sameHalves: false) { model.left = $0 }
    }

    /// Producers write both properties in one transaction (`model.update { … }`) per change; the
    /// snapshot must get exactly one change per transaction, never a torn one: both halves equal
    /// in every snapshot. (A transaction that only writes never has to run again.)
    static func snapshotUpdate(_ spec: RunSpec) -> Measurement {
        let model = Pair()
        return snapshotRow(spec, model: model, sameHalves: true) { event in
            model.update { model in
                model.left = event
                model.right = event
            }
        }
    }

    private static func snapshotRow(
        _ spec: RunSpec,
        model: Pair,
        sameHalves: Bool,
        write: @escaping @Sendable (Event) -> Void
    ) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let token = model.receptionist(for: \.left, \.right)
            .deliver(on: CountingTarget(DispatchQueue(label: "benchmark.consumer"), hops)) { change in
                consumer.receive(
                    old: change.oldValue!, new: change.newValue, changes: change.coalescedCount,
                    sameHalves: sameHalves)
            }
        var measurement = runProducers(spec, consumer: consumer, send: write)
        measurement.hops = hops.value
        let (left, right) = (model.left, model.right)
        measurement.finalValueMissed = consumer.last != left || consumer.lastRight != right
        measurement.check(
            consumer.last == left && consumer.lastRight == right,
            "the last snapshot delivered is not the final state: delivered (\(consumer.last.value), "
                + "\(consumer.lastRight.value)), model (\(left.value), \(right.value))")
        measurement.check(
            consumer.deliveries == spec.changes, "\(consumer.deliveries) snapshots delivered, \(spec.changes) writes")
        checkLossless(token.statistics, spec.changes, &measurement)
        token.finish()
        return measurement
    }

    /// A lossless observation's statistics: every change received, none lost or folded.
    private static func checkLossless(
        _ statistics: ReceptionistStatistics, _ changes: Int, _ measurement: inout Measurement
    ) {
        measurement.check(statistics.received == changes, "received \(statistics.received) of \(changes)")
        measurement.check(
            statistics.dropped == 0 && statistics.discarded == 0 && statistics.coalesced == 0,
            "changes lost or folded: \(statistics)")
    }

    private static func coalescing(
        _ spec: RunSpec,
        write: @escaping @Sendable (Event) -> Void,
        read: () -> Event,
        observe: (CountingTarget<DispatchQueue>, Consumer) -> ObservationToken
    ) -> Measurement {
        let consumer = Consumer(spec, order: .increasing)
        let hops = HopCounter()
        let token = observe(CountingTarget(DispatchQueue(label: "benchmark.consumer"), hops), consumer)
        var measurement = runProducers(spec, consumer: consumer, send: write)
        measurement.hops = hops.value
        let statistics = token.statistics
        measurement.finalValueMissed = consumer.last != read()
        measurement.check(
            consumer.last == read(),
            "coalescing did not end on the final value: delivered \(consumer.last.value), property \(read().value)"
        )
        measurement.check(statistics.received == spec.changes, "received \(statistics.received) of \(spec.changes)")
        measurement.check(
            statistics.coalesced + consumer.deliveries == spec.changes,
            "coalesced \(statistics.coalesced) + delivered \(consumer.deliveries) != \(spec.changes) changes")
        token.finish()
        return measurement
    }

    /// `batch(count: 1000, every: .milliseconds(10))` in front of a serial queue.
    static func batch(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist.pipeline(of: Event.self)
            .batch(count: 1000, every: .milliseconds(10))
            .deliver(on: CountingTarget(queue, hops)) { batch in consumer.receive(batch: batch) }
        var measurement = runProducers(spec, consumer: consumer) { receptionist.send($0) }
        measurement.hops = hops.value
        let statistics = receptionist.statistics
        measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "batches lost: \(statistics)")
        receptionist.finish()
        return measurement
    }

    /// `batch(by: producer, count: 1000, every: .milliseconds(10))` in front of a serial queue:
    /// one batch per run of one producer's changes (with one producer, a batch per 1000 changes,
    /// as the `batch` row; with two, a batch wherever the producers take turns in the intake).
    static func batchByKey(_ spec: RunSpec) -> Measurement {
        batched(spec) { $0.batch(by: { $0.value >> 32 }, count: 1000, every: .milliseconds(10)) }
    }

    /// The `batch-by` row with one pipeline per producer (each `batch(by:)` sees one producer's
    /// sends only, so its runs are whole), all delivering to the same serial queue: what the
    /// Stages article advises for several producers, beside the shared pipeline.
    static func batchByKeyPerProducer(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let pipelines = (0..<spec.producers).map { _ in
            Receptionist.pipeline(of: Event.self)
                .batch(by: { $0.value >> 32 }, count: 1000, every: .milliseconds(10))
                .deliver(on: CountingTarget(queue, hops)) { batch in consumer.receive(batch: batch) }
        }
        var measurement = runProducers(spec, consumer: consumer) { event in
            pipelines[Int(truncatingIfNeeded: event.value >> 32)].send(event)
        }
        measurement.hops = hops.value
        for pipeline in pipelines {
            let statistics = pipeline.statistics
            measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "batches lost: \(statistics)")
            pipeline.finish()
        }
        return measurement
    }

    /// `batch(while: consecutive, count: 1000, every: .milliseconds(10))` in front of a serial
    /// queue: a batch while each change follows the previous one of its producer.
    static func batchWhile(_ spec: RunSpec) -> Measurement {
        batched(spec) {
            $0.batch(
                while: { previous, next in next.value == previous.value &+ 1 }, count: 1000, every: .milliseconds(10))
        }
    }

    /// The `batch` row with the batching stage that `stages` adds.
    private static func batched(
        _ spec: RunSpec,
        _ stages: (Pipeline<ReceptionistInput<Event>, Event>) -> Pipeline<ReceptionistInput<Event>, [Event]>
    ) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = stages(Receptionist.pipeline(of: Event.self))
            .deliver(on: CountingTarget(queue, hops)) { batch in consumer.receive(batch: batch) }
        var measurement = runProducers(spec, consumer: consumer) { receptionist.send($0) }
        measurement.hops = hops.value
        let statistics = receptionist.statistics
        measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "batches lost: \(statistics)")
        receptionist.finish()
        return measurement
    }

    /// A bounded receptionist (`.dropOldest(capacity: 1024)`) under a flood with a slow consumer:
    /// one producer, so that its last change (the newest, which `dropOldest` always keeps) ends
    /// the run.
    static func boundedDispatch(_ spec: RunSpec) -> Measurement {
        precondition(spec.producers == 1, "the bounded row runs with one producer")
        let consumer = Consumer(spec, order: .increasing, finalValue: spec.lastValue(of: 0))
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist<Event>(
            on: CountingTarget(queue, hops),
            buffering: .dropOldest(capacity: boundedCapacity)
        ) { consumer.receive($0) }
        var measurement = runProducers(spec, consumer: consumer) { receptionist.send($0) }
        measurement.hops = hops.value
        let statistics = receptionist.statistics
        measurement.check(statistics.received == spec.changes, "received \(statistics.received) of \(spec.changes)")
        measurement.check(
            consumer.count + statistics.dropped == spec.changes,
            "delivered \(consumer.count) + dropped \(statistics.dropped) != \(spec.changes) changes")
        receptionist.finish()
        return measurement
    }

    static let boundedCapacity = 1024

    /// A receptionist with back-pressure (`.waiting(capacity: 1024)`) under a flood with a slow
    /// consumer: the producer waits for room instead of dropping, so every change must arrive
    /// once, in order, with at most the capacity waiting; records how often the producer waited.
    static func waitingDispatch(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist<Event>(
            on: CountingTarget(queue, hops),
            buffering: .waiting(capacity: waitingCapacity)
        ) { consumer.receive($0) }
        // A refused send (none is expected: the producer is not on the queue) would show as
        // fewer changes received (checked by `finish`) and a consumer left waiting.
        var measurement = runProducers(spec, consumer: consumer) { receptionist.send($0) }
        let statistics = receptionist.statistics
        measurement.waits = statistics.waits
        measurement.check(
            statistics.maxPending <= waitingCapacity,
            "\(statistics.maxPending) changes waited at once, capacity \(waitingCapacity)")
        measurement.check(
            consumer.deliveries == spec.changes, "\(consumer.deliveries) changes delivered, \(spec.changes) sent")
        return finish(receptionist, hops: hops, measurement)
    }

    static let waitingCapacity = 1024

    /// Checks the statistics of a lossless receptionist and lets it finish.
    private static func finish(_ receptionist: Receptionist<Event>, hops: HopCounter?, _ run: Measurement)
        -> Measurement
    {
        var measurement = run
        measurement.hops = hops?.value
        let statistics = receptionist.statistics
        let changes = measurement.changes
        measurement.check(statistics.received == changes, "received \(statistics.received) of \(changes)")
        measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "changes lost: \(statistics)")
        receptionist.finish()
        return measurement
    }
}

/// How many changes each section makes.
struct Sizes: Sendable {
    var throughput: Int
    /// NotificationCenter posts synchronously and slowly on Linux: fewer events.
    var notification: Int
    var paced: Int
    var flood: Int
    var contention: Int
    var ingest: Int
    var pace = 100_000
    var floodWork: UInt64 = 1_000

    static let full = Sizes(
        throughput: 1_000_000, notification: 20_000, paced: 2_000, flood: 1_000_000, contention: 640_000,
        ingest: 1_600_000)
    // The quick contention rows are large enough for their collapse check (`--fail-on-collapse`)
    // to compare times of tens of milliseconds, not the start-up of 64 threads.
    static let quick = Sizes(
        throughput: 20_000, notification: 1_000, paced: 200, flood: 20_000, contention: 128_000, ingest: 64_000)
}

/// Every row, in the order they run and are reported.
func allScenarios(_ sizes: Sizes, injectFault: Bool = false) -> [Scenario] {
    var rows: [Scenario] = []
    func makeSpec(_ producers: Int, _ changes: Int) -> RunSpec {
        var spec = RunSpec(producers: producers, changes: changes)
        spec.injectFault = injectFault
        return spec
    }

    for producers in [1, 2] {
        let spec = makeSpec(producers, sizes.throughput)
        var notificationSpec = makeSpec(producers, sizes.notification)
        notificationSpec.stampEvery = 16
        func row(
            _ key: String, _ name: String, _ kind: Kind, _ spec: RunSpec,
            _ run: @escaping @Sendable (RunSpec) -> Measurement
        ) {
            rows.append(Scenario(key: key, name: name, kind: kind, section: .throughput, spec: spec, run: run))
        }
        row("receptionist-dispatch", "receptionist → DispatchQueue", .library, spec, LibraryRows.receptionistDispatch)
        row(
            "receptionist-dispatch-contents", "receptionist → DispatchQueue, send(contentsOf:) 64 at a time", .library,
            spec, LibraryRows.receptionistDispatchContents)
        row(
            "receptionist-operation", "receptionist → OperationQueue", .library, spec, LibraryRows.receptionistOperation
        )
        row("receptionist-main", "receptionist → main queue (MainActor)", .library, spec, LibraryRows.receptionistMain)
        row(
            "receptionist-main-budget", "receptionist → main queue (MainActor), MainThreadBudget on", .library, spec,
            LibraryRows.receptionistMainBudgeted)
        row("receptionist-actor", "receptionist → actor", .library, spec, LibraryRows.receptionistActor)
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            row(
                "receptionist-executor", "receptionist → SerialExecutor (toy event loop)", .library, spec,
                LibraryRows.receptionistExecutor)
        }
        row("observed-lossless", "@Observed → DispatchQueue (lossless)", .library, spec, LibraryRows.observedLossless)
        row(
            "observed-lossless-read", "@Observed read once (registrar, untracked) → DispatchQueue (lossless)",
            .library, spec, LibraryRows.observedLosslessRead)
        if producers == 1 {
            // 1P only: see observedLosslessTracked.
            row(
                "observed-lossless-tracked", "@Observed tracked, re-armed → DispatchQueue (lossless)", .library,
                spec, LibraryRows.observedLosslessTracked)
        }
        row("box-lossless", "ObservableValue → DispatchQueue (lossless)", .library, spec, LibraryRows.boxLossless)
        row("snapshot", "snapshot of 2 @Observed → DispatchQueue (lossless)", .library, spec, LibraryRows.snapshot)
        row(
            "snapshot-update", "update { 2 properties } → snapshot → DispatchQueue", .library, spec,
            LibraryRows.snapshotUpdate)
        row("coalesce", "@Observed + coalesce() → DispatchQueue", .library, spec, LibraryRows.coalesceObserved)
        row("coalesce-box", "ObservableValue + coalesce() → DispatchQueue", .library, spec, LibraryRows.coalesceBox)
        row(
            "observations", "Observation's @Observable + Observations (coalescing)", .baseline, spec,
            Baselines.observations)
        row("batch", "batch(count: 1000, every: 10 ms) → DispatchQueue", .library, spec, LibraryRows.batch)
        row(
            "batch-by", "batch(by: producer, count: 1000, every: 10 ms) → DispatchQueue", .library, spec,
            LibraryRows.batchByKey)
        row(
            "batch-by-per-producer", "batch(by: producer, …), one pipeline per producer → DispatchQueue", .library,
            spec, LibraryRows.batchByKeyPerProducer)
        row(
            "batch-while", "batch(while: consecutive, count: 1000, every: 10 ms) → DispatchQueue", .library, spec,
            LibraryRows.batchWhile)
        row("dispatch-async", "DispatchQueue.async per change", .baseline, spec, Baselines.dispatchAsync)
        row("main-async", "DispatchQueue.main.async per change", .baseline, spec, Baselines.mainAsync)
        row("operation-add", "OperationQueue.addOperation per change", .baseline, spec, Baselines.operationQueue)
        row("async-stream", "AsyncStream (unbounded) + consumer task", .baseline, spec, Baselines.asyncStream)
        row(
            "actor-task", "Task { await actor.receive } per change (unordered)", .baseline, spec,
            Baselines.actorTaskPerChange)
        row(
            "async-stream-actor", "AsyncStream (unbounded) + for await in the actor", .baseline, spec,
            Baselines.asyncStreamActor)
        row(
            "notification", "NotificationCenter → OperationQueue observer", .baseline, notificationSpec,
            Baselines.notificationCenter)
        row("floor", "floor: Mutex buffer, one drain per burst", .floor, spec, Baselines.floor)
        row("coalescing-floor", "coalescing floor: Mutex latest value", .floor, spec, Baselines.coalescingFloor)
    }

    for producers in [1, 2] {
        var spec = makeSpec(producers, sizes.paced)
        spec.paceNanos = sizes.pace
        spec.stampEvery = 1
        func row(_ key: String, _ name: String, _ kind: Kind, _ run: @escaping @Sendable (RunSpec) -> Measurement) {
            rows.append(Scenario(key: key, name: name, kind: kind, section: .paced, spec: spec, run: run))
        }
        row("receptionist-dispatch", "receptionist → DispatchQueue", .library, LibraryRows.receptionistDispatch)
        row("receptionist-main", "receptionist → main queue (MainActor)", .library, LibraryRows.receptionistMain)
        row(
            "receptionist-main-budget", "receptionist → main queue (MainActor), MainThreadBudget on", .library,
            LibraryRows.receptionistMainBudgeted)
        row("coalesce", "@Observed + coalesce() → DispatchQueue", .library, LibraryRows.coalesceObserved)
        row("observed-lossless", "@Observed → DispatchQueue (lossless)", .library, LibraryRows.observedLossless)
        row("batch", "batch(count: 1000, every: 10 ms) → DispatchQueue", .library, LibraryRows.batch)
        row("dispatch-async", "DispatchQueue.async per change", .baseline, Baselines.dispatchAsync)
        row("main-async", "DispatchQueue.main.async per change", .baseline, Baselines.mainAsync)
        row("floor", "floor: Mutex buffer, one drain per burst", .floor, Baselines.floor)
    }

    do {
        var spec = makeSpec(1, sizes.flood)
        spec.consumerWorkNanos = sizes.floodWork
        var tenfold = spec
        tenfold.changes = sizes.flood * 10
        func row(
            _ key: String, _ name: String, _ kind: Kind, _ spec: RunSpec,
            _ run: @escaping @Sendable (RunSpec) -> Measurement
        ) {
            rows.append(Scenario(key: key, name: name, kind: kind, section: .flood, spec: spec, run: run))
        }
        row(
            "receptionist-dispatch", "receptionist (unbounded) → DispatchQueue", .library, spec,
            LibraryRows.receptionistDispatch)
        row("bounded", "receptionist (dropOldest 1024) → DispatchQueue", .library, spec, LibraryRows.boundedDispatch)
        row("waiting", "receptionist (waiting 1024) → DispatchQueue", .library, spec, LibraryRows.waitingDispatch)
        row("coalesce", "@Observed + coalesce() → DispatchQueue", .library, spec, LibraryRows.coalesceObserved)
        row("coalesce-10x", "@Observed + coalesce(), 10× the changes", .library, tenfold, LibraryRows.coalesceObserved)
        row("dispatch-async", "DispatchQueue.async per change", .baseline, spec, Baselines.dispatchAsync)
        row("async-stream", "AsyncStream (unbounded) + consumer task", .baseline, spec, Baselines.asyncStream)
        row("floor", "floor: Mutex buffer, one drain per burst", .floor, spec, Baselines.floor)
        row("coalescing-floor", "coalescing floor: Mutex latest value", .floor, spec, Baselines.coalescingFloor)
    }

    for producers in [1, 2, 8] {
        var spec = makeSpec(producers, sizes.flood / 4)
        spec.consumerWorkNanos = sizes.floodWork
        func row(_ key: String, _ name: String, _ kind: Kind, _ run: @escaping @Sendable (RunSpec) -> Measurement) {
            rows.append(Scenario(key: key, name: name, kind: kind, section: .backPressure, spec: spec, run: run))
        }
        row("waiting", "receptionist (waiting 1024) → DispatchQueue", .library, LibraryRows.waitingDispatch)
        row("waiting-map", "map + waiting 1024 → DispatchQueue", .library, LibraryRows.waitingMap)
        row("waiting-batch", "batch(count: 64) + waiting 1024 → DispatchQueue", .library, LibraryRows.waitingBatch)
        row("unbounded-map", "map + unbounded → DispatchQueue", .library, LibraryRows.unboundedMap)
        row("semaphore", "DispatchSemaphore(1024) + async per change", .baseline, Baselines.semaphoreAsync)
    }
    rows += contentionScenarios(sizes.contention, makeSpec: makeSpec)
    rows += ingestScenarios(sizes.ingest, makeSpec: makeSpec)
    rows += flowControlScenarios(sizes.throughput, makeSpec: makeSpec)
    rows += pausingProducerScenarios(sizes.flood, work: sizes.floodWork, makeSpec: makeSpec)
    rows += writersScenarios(sizes.throughput, makeSpec: makeSpec)
    return rows
}

/// A toy event loop for the executor row: one thread running the jobs it is given in order, as a
/// swift-nio event loop's executor does (`execute` of a closure that runs the job), without the
/// dependency.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class BenchmarkEventLoop: SerialExecutor {
    private let jobs = Protected<[UnownedJob?]>([])
    private let available = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "benchmark.event-loop"
        thread.start()
    }

    /// Runs each job in turn; `nil` stops the thread.
    private func run() {
        while true {
            available.wait()
            guard let job = jobs.withLock({ $0.removeFirst() }) else { break }
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
        stopped.signal()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// Runs the jobs given so far, then stops the thread.
    func shutdown() {
        jobs.withLock { $0.append(nil) }
        available.signal()
        stopped.wait()
    }
}

/// Each producer's changes gathered into batches of `size`, handed on whole: one slot per
/// producer, touched only by its producer's thread (and by the run after every producer returned).
// Unsafe: one writer per slot, then one reader after the producers joined.
final class ProducerBatches: @unchecked Sendable {
    private final class Slot {
        // One thread at a time (its producer's): the runtime's exclusivity check on each access
        // to a class's stored property would otherwise be most of the batching's cost.
        @exclusivity(unchecked) var pending: [Event] = []
    }

    private let slots: [Slot]
    private let size: Int

    init(producers: Int, size: Int) {
        slots = (0..<producers).map { _ in Slot() }
        self.size = size
    }

    /// On producer `event.producer`'s thread: adds `event`, and hands the batch on once full.
    func append(_ event: Event, handOn: ([Event]) -> Void) {
        let slot = slots[event.producer]
        slot.pending.append(event)
        if slot.pending.count == size {
            handOn(slot.pending)
            slot.pending.removeAll(keepingCapacity: true)
        }
    }

    /// After every producer returned: hands on what each producer's last batch holds.
    func sendRest(handOn: ([Event]) -> Void) {
        for slot in slots where !slot.pending.isEmpty {
            handOn(slot.pending)
            slot.pending.removeAll()
        }
    }
}
