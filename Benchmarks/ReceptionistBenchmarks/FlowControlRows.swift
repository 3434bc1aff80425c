// The flow-control rows: do pipelines with stages keep up with their writers? One stream of
// quotes, written by 4 threads flat out, feeds three pipelines: `map(\.newValue)
// .throttle(for: 50 ms, latest: true)` to the main actor, `map(\.newValue).batch(count: 1000,
// every: 100 ms)` to a serial queue, and `coalesce()` to an `OperationQueue`. The source is an
// `@Observed` property observed three times, or a `Hub` channel the same threads post to. Every
// quote carries the time it was written, so the throttled consumer knows how old each quote it
// shows is. The figures: the oldest quote the throttled consumer showed, how long after the last
// write the last delivery came, and peak memory; the checks: the batch consumer got every quote
// once, in order per writer, and the coalescing and throttled consumers ended on the final quote.

import Dispatch
import Foundation
import Receptionist
import Synchronization

/// A model with one observed property, the quote of the flow-control rows.
final class Ticker: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored property is an @Observed (a reference to a locked box).
    @Observed var quote = Event.initial
}

/// The quotes of an observation, mapped to their new values.
typealias Quotes = Pipeline<ObservedProperty<Ticker, Event>, Event>

/// The throttled consumer of a flow-control row, on the main actor: how old the oldest quote it
/// showed was, and the last quote it showed and when.
final class ThrottledScreen: Sendable {
    private struct State {
        var oldest: UInt64 = 0
        var last = Event.initial
        var lastAt: UInt64 = 0
        var shown = 0
    }

    private let state = Protected(State())

    func show(_ quote: Event) {
        let at = now()
        state.withLock { state in
            if quote.stamp != 0 { state.oldest = max(state.oldest, at &- quote.stamp) }
            state.last = quote
            state.lastAt = at
            state.shown &+= 1
        }
    }

    var oldest: UInt64 { state.withLock { $0.oldest } }
    var shown: Int { state.withLock { $0.shown } }
    /// The last quote shown, and when.
    var last: (quote: Event, at: UInt64) { state.withLock { ($0.last, $0.lastAt) } }
}

extension LibraryRows {
    /// The writer threads of a flow-control row.
    static let flowControlWriters = 4

    /// What a flow-control row's set-up hands back: how to end its three pipelines, and the
    /// throttled pipeline's statistics.
    private struct FlowControlSetup {
        var finishAll: () -> Void
        var throttledStatistics: () -> ReceptionistStatistics
        /// The batching pipeline's statistics (what waited in front of its stages).
        var batchedStatistics: () -> ReceptionistStatistics
    }

    /// Three observations of one `@Observed var quote`, written the way a user writes them
    /// first: `map(\.newValue)`.
    static func observedPipelines(_ spec: RunSpec) -> Measurement {
        observedPipelines(spec, keyPath: true)
    }

    /// The same with `map { $0.newValue }`: a closure instead of a key path, which `map` applies
    /// through the runtime (`KeyPath` projection, generic metadata lookups) for every change.
    static func observedPipelinesClosure(_ spec: RunSpec) -> Measurement {
        observedPipelines(spec, keyPath: false)
    }

    private static func observedPipelines(_ spec: RunSpec, keyPath: Bool) -> Measurement {
        let ticker = Ticker()
        func newValue(_ pipeline: PropertyObservation<Ticker, Event>) -> Quotes {
            keyPath ? pipeline.map(\.newValue) : pipeline.map { $0.newValue }
        }
        return flowControlRow(
            spec, write: { ticker.quote = $0 }, read: { ticker.quote },
            setUp: {
                screen, batches, coalesced in
                let queue = DispatchQueue(label: "benchmark.batches")
                let operations = OperationQueue()
                operations.maxConcurrentOperationCount = 1
                let throttled = newValue(ticker.receptionist(for: \.quote))
                    .throttle(for: .milliseconds(50), latest: true)
                    .deliver(on: .mainActor) { quote in screen.show(quote) }
                let batched = newValue(ticker.receptionist(for: \.quote))
                    .batch(count: 1000, every: .milliseconds(100))
                    .deliver(on: queue) { batch in batches.receive(batch: batch) }
                let coalescing = ticker.receptionist(for: \.quote)
                    .coalesce()
                    .deliver(on: operations) { change in
                        coalesced.receive(old: change.oldValue!, new: change.newValue, changes: change.coalescedCount)
                    }
                return FlowControlSetup(
                    finishAll: {
                        throttled.finish()
                        batched.finish()
                        coalescing.finish()
                    },
                    throttledStatistics: { throttled.statistics },
                    batchedStatistics: { batched.statistics })
            })
    }

    /// The same three pipelines on one `Hub` channel, posted to by the same threads.
    static func hubPipelines(_ spec: RunSpec) -> Measurement {
        let hub = Hub()
        let quotes = Hub.Channel<Event>("quotes")
        return flowControlRow(
            spec, write: { hub.post(quotes, $0) }, read: { nil },
            setUp: {
                screen, batches, coalesced in
                let queue = DispatchQueue(label: "benchmark.batches")
                let operations = OperationQueue()
                operations.maxConcurrentOperationCount = 1
                let previous = Protected(Event.initial)
                let throttled = hub.pipeline(for: quotes)
                    .throttle(for: .milliseconds(50), latest: true)
                    .deliver(on: .mainActor) { quote in screen.show(quote) }
                let batched = hub.pipeline(for: quotes)
                    .batch(count: 1000, every: .milliseconds(100))
                    .deliver(on: queue) { batch in batches.receive(batch: batch) }
                let coalescing = hub.pipeline(for: quotes)
                    .coalesce()
                    .deliver(on: operations) { quotes in
                        let old = previous.withLock { old in
                            defer { old = quotes.latest }
                            return old
                        }
                        coalesced.receive(old: old, new: quotes.latest, changes: quotes.count)
                    }
                return FlowControlSetup(
                    finishAll: {
                        throttled.finish()
                        batched.finish()
                        coalescing.finish()
                    },
                    throttledStatistics: { throttled.statistics },
                    batchedStatistics: { batched.statistics })
            })
    }

    /// Runs a flow-control row: `setUp` starts the three pipelines with their consumers, the
    /// writers write, and the row waits until the batch consumer has every quote, the coalescing
    /// consumer has accounted for every quote, and the throttled consumer showed the final quote
    /// (`read`, for a property; for a hub, whose posts have no one final quote, the last quote of
    /// some writer) and then nothing for ``quietNanos``.
    private static func flowControlRow(
        _ spec: RunSpec,
        write: @escaping @Sendable (Event) -> Void,
        read: @escaping () -> Event?,
        setUp: (ThrottledScreen, Consumer, Consumer) -> FlowControlSetup
    ) -> Measurement {
        // The consumers keep no latency samples of their own (every quote is stamped).
        var quiet = spec
        quiet.stampEvery = 1 << 40
        let screen = ThrottledScreen()
        let batches = Consumer(quiet)
        let coalesced = Consumer(quiet, order: .increasing)
        let setup = setUp(screen, batches, coalesced)
        func isFinal(_ quote: Event) -> Bool {
            if let final = read() { return quote == final }
            return quote.sequence == spec.changes(of: quote.producer)
        }
        var measurement = runProducers(spec, consumer: batches, send: write) { timeout in
            let deadline = now() &+ UInt64(timeout * 1e9)
            guard batches.wait(timeoutSeconds: timeout), coalesced.wait(timeoutSeconds: timeout) else { return nil }
            while true {
                let (last, at) = screen.last
                if isFinal(last) && now() &- at > quietNanos { break }
                guard now() < deadline else { return nil }
                usleep(500)
            }
            let finishedAt = max(batches.finishedAt, coalesced.finishedAt, screen.last.at)
            return Arrival(finishedAt: finishedAt, allocationCount: batches.allocationsAtFinish)
        }
        measurement.check(
            isFinal(coalesced.last), "coalesce did not end on the final quote: it ended on \(coalesced.last.value)")
        measurement.check(
            coalesced.count == spec.changes, "coalesce accounted for \(coalesced.count) of \(spec.changes) quotes")
        measurement.check(
            isFinal(screen.last.quote),
            "the throttled consumer did not end on the final quote: it ended on \(screen.last.quote.value)")
        measurement.failures += coalesced.errors.map { "coalesce: \($0)" }
        measurement.latencies = []
        measurement.oldestShownNanos = screen.oldest
        measurement.lagAfterLastWriteNanos =
            measurement.elapsedNanos &- min(measurement.elapsedNanos, measurement.sendNanos)
        measurement.deliveries = screen.shown
        let statistics = setup.throttledStatistics()
        measurement.throttledMaxPending = statistics.maxPending
        // What waited in front of the stages, as a user reads it (the same figure for both
        // sources): the larger of the throttling and the batching pipeline's.
        measurement.maxWaitingForStages = max(
            statistics.maxPendingBeforeStages, setup.batchedStatistics().maxPendingBeforeStages)
        setup.finishAll()
        return measurement
    }

    /// How long the throttled consumer must show nothing after the final quote for a row to end:
    /// three throttle intervals.
    static let quietNanos: UInt64 = 150_000_000
}

/// The flow-control rows: both sources with 4 writers.
func flowControlScenarios(_ changes: Int, makeSpec: (Int, Int) -> RunSpec) -> [Scenario] {
    var spec = makeSpec(LibraryRows.flowControlWriters, changes)
    spec.stampEvery = 1
    func row(_ key: String, _ name: String, _ run: @escaping @Sendable (RunSpec) -> Measurement) -> Scenario {
        Scenario(key: key, name: name, kind: .library, section: .flowControl, spec: spec, run: run)
    }
    return [
        row(
            "observed-pipelines", "3 observations of @Observed var quote (throttle, batch, coalesce)",
            LibraryRows.observedPipelines),
        row(
            "observed-pipelines-closure", "the same 3 observations with map { $0.newValue }",
            LibraryRows.observedPipelinesClosure),
        row("hub-pipelines", "the same 3 pipelines on one Hub channel", LibraryRows.hubPipelines),
    ]
}

/// The flow-control section as markdown.
func flowControlMarkdown(_ rows: [RowResult]) -> [String] {
    guard !rows.isEmpty else { return [] }
    var out: [String] = []
    out.append("")
    out.append(
        "### Flow control (4 writers flat out; throttle 50 ms → main actor, batch 1000 / 100 ms → queue, coalesce → OperationQueue)"
    )
    out.append("")
    out.append(
        "| row | writers | quotes | oldest quote shown | lag after the last write | peak RSS Δ | send ns/quote "
            + "| throttled: max pending | max waiting for stages (throttle or batch) | deliveries |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    func spread(_ value: Spread?, _ show: (Double) -> String) -> String {
        value.map { "\(show($0.median)) (\(show($0.min))–\(show($0.max)))" } ?? "—"
    }
    for row in rows {
        out.append(
            "| \(row.name) | \(row.producers) | \(count(Double(row.changes))) | \(spread(row.oldestShownNanos, nanos)) | "
                + "\(spread(row.lagAfterLastWriteNanos, nanos)) | \(spread(row.peakGrowthBytes, bytes)) | "
                + "\(format(row.sendNanosPerChange.median)) | \(spread(row.throttledMaxPending, count)) | "
                + "\(spread(row.maxWaitingForStages, count)) | \(count(row.deliveries)) |")
    }
    return out
}

// MARK: - A producer that must not block

// The rows of a producer that must not block: one producer thread, the stand-in for an event loop,
// sends messages of 128 bytes as fast as it can to a consumer on a serial queue that spends 1 µs
// on each, with at most 10 000 waiting. With `.watermarks(low: 5 000, high: 10 000)` the producer
// never blocks in `send`: when a send answers `.acceptedAboveHighWatermark` it stops, registers
// `whenWritable(on: .immediate)` and waits for that call itself (an event loop would do other work
// meanwhile). Beside it: `.waiting(capacity: 10 000)`, whose `send` blocks; the unbounded buffer,
// whose memory follows the backlog; `.dropNewest(capacity: 10 000)`, which loses; and the
// hand-written floor, a lock-protected array with one drain per burst and an atomic backlog
// counter whose drain resumes the producer when it falls to 5 000. The figures: total time, the
// messages lost, peak memory, the producer's pauses, the sends that waited for room, the longest
// single send and the sends over 1 ms.

/// The message of the pausing-producer rows, 128 bytes, as a small network message would be:
/// the producer's stamp (its sequence number, from 1) and padding.
struct Message: Sendable {
    var stamp: Int
    var padding:
        (
            UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
            UInt64, UInt64
        )

    @inline(__always)
    init(stamp: Int) {
        self.stamp = stamp
        padding = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }
}

/// The consumer of the pausing-producer rows, on one serial queue: spins its work on every
/// message, checks that the stamps arrive once, in increasing order (each the previous one + 1 in
/// a lossless row), and signals once it has as many messages as it was told to expect.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class MessageSink: @unchecked Sendable {
    // @unchecked: `last`, `gaps`, `outOfOrder` and `finishedAt` are written on the consumer's
    // serial queue only (`finishedAt` by whoever wins `fired`), and read after `done`.
    private let work: UInt64
    private let lossless: Bool
    private var last = 0
    private(set) var gaps = 0
    private(set) var outOfOrder = 0
    private(set) var finishedAt: UInt64 = 0
    private let received = Atomic<Int>(0)
    private let expected: Atomic<Int>
    private let fired = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(expecting messages: Int, work: UInt64, lossless: Bool) {
        expected = Atomic(messages)
        self.work = work
        self.lossless = lossless
    }

    @inline(__always)
    func receive(_ message: Message) {
        receive(stamp: message.stamp)
    }

    /// Receives a message stamped `stamp` (a row whose messages are not ``Message``s).
    @inline(__always)
    func receive(stamp: Int) {
        spin(nanoseconds: work)
        if stamp <= last {
            outOfOrder &+= 1
        } else {
            if lossless && stamp != last &+ 1 { gaps &+= 1 }
            last = stamp
        }
        // Sequentially consistent, with `expect(_:)`: one of the two sees the other's store.
        let count = received.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue
        if count == expected.load(ordering: .sequentiallyConsistent) { finish() }
    }

    /// How many messages to wait for in all: a lossy row learns it once its producer returned.
    func expect(_ messages: Int) {
        expected.store(messages, ordering: .sequentiallyConsistent)
        if received.load(ordering: .sequentiallyConsistent) >= messages { finish() }
    }

    private func finish() {
        guard !fired.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finishedAt = now()
        done.signal()
    }

    var count: Int { received.load(ordering: .acquiring) }
    var lastStamp: Int { last }

    func wait(timeoutSeconds: Double) -> Bool {
        done.wait(timeout: .now() + timeoutSeconds) == .success
    }
}

/// What one send did, as the pausing producer sees it.
enum PausingVerdict {
    case sent
    /// Accepted, and the producer must stop until told to go on.
    case pause
    case dropped
    case refused
}

/// What the producer thread of a pausing-producer row counted.
struct ProducerTally: Sendable {
    var accepted = 0
    var pauses = 0
    var dropped = 0
    var refused = 0
    var maxSendNanos: UInt64 = 0
    var slowSends = 0
    /// Voluntary context switches of the producer thread outside its pauses: a send that waited
    /// (for room, or for a lock) gave up its core; a preempted one did not.
    var blockedSends: Int?
    var endedAt: UInt64 = 0
}

/// Voluntary context switches of the calling thread (`getrusage(RUSAGE_THREAD)`, Linux); `nil`
/// where the platform does not count them per thread.
func threadVoluntarySwitches() -> Int? {
    #if os(Linux)
    var usage = rusage()
    let thread: Int32 = 1  // RUSAGE_THREAD
    getrusage(thread, &usage)
    return Int(usage.ru_nvcsw)
    #else
    return nil
    #endif
}

/// The hand-written floor of the pausing-producer rows: a `Mutex`-protected array with one drain
/// per burst (``LosslessFloor``), and an atomic backlog counter: the producer adds what a message
/// weighs (1, or its bytes) before each message and pauses once it reaches the high watermark;
/// the drain takes it off after each message and, at or below the low watermark, resumes the
/// producer if it is paused.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class WatermarkFloor<Item: Sendable>: Sendable {
    private struct State {
        var buffer: [Item] = []
        var drainScheduled = false
    }

    private let state = Mutex(State())
    private let backlog = Atomic<Int>(0)
    private let paused = Atomic<Bool>(false)
    private let resumed = DispatchSemaphore(value: 0)
    private let low: Int
    private let high: Int
    private let queue: DispatchQueue
    private let weigh: @Sendable (Item) -> Int
    private let handler: @Sendable (Item) -> Void

    init(
        low: Int, high: Int, queue: DispatchQueue, weighing weigh: @escaping @Sendable (Item) -> Int,
        handler: @escaping @Sendable (Item) -> Void
    ) {
        self.low = low
        self.high = high
        self.queue = queue
        self.weigh = weigh
        self.handler = handler
    }

    /// Hands on `message`; `true` when the backlog reached the high watermark (pause, then call
    /// ``waitUntilWritable()``).
    func send(_ message: Item) -> Bool {
        let backlog = backlog.wrappingAdd(weigh(message), ordering: .sequentiallyConsistent).newValue
        let schedule = state.withLock { state -> Bool in
            state.buffer.append(message)
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
        if schedule { queue.async { self.drain() } }
        return backlog >= high
    }

    /// Waits until the drain took the backlog down to the low watermark (at once if it already has).
    func waitUntilWritable() {
        paused.store(true, ordering: .sequentiallyConsistent)
        if backlog.load(ordering: .sequentiallyConsistent) <= low,
            paused.exchange(false, ordering: .sequentiallyConsistent)
        {
            return
        }
        resumed.wait()
    }

    private func drain() {
        var chunk: [Item] = []
        while true {
            let isEmpty = state.withLock { state -> Bool in
                swap(&chunk, &state.buffer)
                if chunk.isEmpty { state.drainScheduled = false }
                return chunk.isEmpty
            }
            if isEmpty { return }
            for message in chunk {
                let weight = weigh(message)
                handler(message)
                // This message took the backlog down to the low watermark (for weight 1: to it).
                let after = backlog.wrappingSubtract(weight, ordering: .sequentiallyConsistent).newValue
                if after <= low, after &+ weight > low,
                    paused.exchange(false, ordering: .sequentiallyConsistent)
                {
                    resumed.signal()
                }
            }
            chunk.removeAll(keepingCapacity: true)
        }
    }
}

extension LibraryRows {
    /// The watermarks of the pausing-producer rows, and the capacity of the bounded ones.
    static let pauseLow = 5_000
    static let pauseHigh = 10_000

    /// The most a bounded pausing-producer row may grow beyond its 10 000 messages of 128 bytes:
    /// the buffer's spare capacity and process noise for the library's rows; for the floor also
    /// the drain's chunk, an array as large as the buffer (each grows by doubling, to 2 MiB).
    static let pausingMemorySlack = 2 << 20
    static let pausingFloorMemorySlack = 6 << 20

    /// `.watermarks(low: 5 000, high: 10 000)`: the producer pauses on `shouldPause` and waits
    /// for `whenWritable(on: .immediate)`.
    static func pausingWatermarks(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return pausingRow(spec, buffering: .watermarks(low: pauseLow, high: pauseHigh), bounded: true)
    }

    /// `.watermarks(low: 5 000, high: 10 000)` followed as an event loop would: a persistent
    /// `onWritabilityChange(on: .immediate)` handler; the producer stops at `.paused` and goes on
    /// at the `.writable` that follows it (or at `.ended`).
    static func pausingWritabilityHandler(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        let paused = Atomic<Bool>(false)
        let resumed = DispatchSemaphore(value: 0)
        return pausingRow(
            spec, buffering: .watermarks(low: pauseLow, high: pauseHigh), bounded: true,
            follow: { receptionist in
                receptionist.onWritabilityChange(on: .immediate) { state in
                    switch state {
                    case .paused: paused.store(true, ordering: .sequentiallyConsistent)
                    case .writable, .ended:
                        if paused.exchange(false, ordering: .sequentiallyConsistent) { resumed.signal() }
                    }
                }
            },
            waitUntilWritable: { _ in resumed.wait() })
    }

    /// `.waiting(capacity: 10 000)`: `send` blocks while the buffer is full.
    static func pausingWaiting(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return pausingRow(spec, buffering: .waiting(capacity: pauseHigh), bounded: true, mayWait: true)
    }

    /// The unbounded default: nothing pauses the producer; memory follows the backlog.
    static func pausingUnbounded(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return pausingRow(spec, buffering: .unbounded, bounded: false)
    }

    /// `.dropNewest(capacity: 10 000)`: the producer never waits, and what does not fit is lost.
    static func pausingDropNewest(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return pausingRow(spec, buffering: .dropNewest(capacity: pauseHigh), bounded: true, lossy: true)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private static func pausingRow(
        _ spec: RunSpec, buffering: BufferPolicy, bounded: Bool, lossy: Bool = false, mayWait: Bool = false,
        follow: ((Receptionist<Message>) -> WritabilityListener)? = nil,
        waitUntilWritable: (@Sendable (Receptionist<Message>) -> Void)? = nil
    ) -> Measurement {
        let sink = MessageSink(expecting: spec.changes, work: spec.consumerWorkNanos, lossless: !lossy)
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist<Message>(on: queue, buffering: buffering) { sink.receive($0) }
        let listener = follow?(receptionist)
        let resumed = DispatchSemaphore(value: 0)
        var (measurement, tally) = runPausingProducer(
            spec, sink: sink, lossy: lossy,
            send: { message in
                let result = receptionist.send(message)
                switch result {
                case .acceptedAboveHighWatermark: return .pause
                case .dropped: return .dropped
                case .refused: return .refused
                case .accepted, .acceptedEvictingOldest, .coalesced: return .sent
                }
            },
            waitUntilWritable: {
                if let waitUntilWritable {
                    waitUntilWritable(receptionist)
                } else {
                    receptionist.whenWritable(on: .immediate) { resumed.signal() }
                    resumed.wait()
                }
            })
        // The consumer signals from inside the task block of its last message: `delivered` counts
        // that one once the block returned.
        var statistics = receptionist.statistics
        let settled = now() &+ 1_000_000_000
        while statistics.delivered < sink.count && now() < settled {
            usleep(100)
            statistics = receptionist.statistics
        }
        measurement.waits = statistics.waits
        // `received` counts the dropped messages too.
        measurement.check(
            statistics.received == tally.accepted + tally.dropped,
            "received \(statistics.received), \(tally.accepted) accepted + \(tally.dropped) dropped")
        measurement.check(
            statistics.delivered == sink.count, "delivered \(statistics.delivered), the consumer got \(sink.count)")
        measurement.check(
            statistics.dropped == tally.dropped,
            "\(tally.dropped) sends answered .dropped, statistics.dropped \(statistics.dropped)")
        measurement.check(
            statistics.pauses == tally.pauses, "paused \(tally.pauses) times, statistics.pauses \(statistics.pauses)")
        if !lossy {
            measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "messages lost: \(statistics)")
        }
        if !mayWait {
            measurement.check(statistics.waits == 0, "a send waited for room \(statistics.waits) times")
        }
        if bounded {
            measurement.check(
                statistics.maxPending <= pauseHigh,
                "\(statistics.maxPending) messages waited at once, bound \(pauseHigh)")
            checkPausingMemory(&measurement)
        }
        listener?.cancel()
        receptionist.finish()
        return measurement
    }

    /// The hand-written floor (``WatermarkFloor``).
    static func pausingFloor(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        var measurement = floorRow(spec, low: pauseLow, high: pauseHigh, stamp: \.stamp) { $0 }
        checkPausingMemory(&measurement, slack: pausingFloorMemorySlack)
        return measurement
    }

    /// A ``WatermarkFloor`` of `Item`s between `low` and `high` (in what `weighing` says), fed by
    /// the pausing producer: each of its messages becomes an item by `make`, and reaches the
    /// consumer by its `stamp`.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func floorRow<Item: Sendable>(
        _ spec: RunSpec, low: Int, high: Int, weighing: @escaping @Sendable (Item) -> Int = { _ in 1 },
        stamp: @escaping @Sendable (Item) -> Int, make: @escaping @Sendable (Message) -> Item
    ) -> Measurement {
        let sink = MessageSink(expecting: spec.changes, work: spec.consumerWorkNanos, lossless: true)
        let floor = WatermarkFloor<Item>(
            low: low, high: high, queue: DispatchQueue(label: "benchmark.consumer"), weighing: weighing
        ) { sink.receive(stamp: stamp($0)) }
        return runPausingProducer(
            spec, sink: sink, lossy: false, send: { floor.send(make($0)) ? .pause : .sent },
            waitUntilWritable: { floor.waitUntilWritable() }
        ).0
    }

    static func checkPausingMemory(
        _ measurement: inout Measurement, slack: Int = pausingMemorySlack,
        bound: Int = pauseHigh * MemoryLayout<Message>.size
    ) {
        if let growth = measurement.peakGrowthBytes {
            measurement.check(
                growth <= bound + slack,
                "peak RSS grew \(bytes(Double(growth))), bound \(bytes(Double(bound))) + \(bytes(Double(slack)))"
            )
        }
    }

    /// Runs one producer thread that sends `spec.changes` messages through `send` as fast as it
    /// can, timing every send, and calls `waitUntilWritable` whenever a send says to pause (that
    /// wait is not counted as a send); then waits for the consumer to have every accepted
    /// message, and checks what it got: `lossy` rows may lose messages (each one counted as
    /// `.dropped`), the others none.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func runPausingProducer(
        _ spec: RunSpec,
        sink: MessageSink,
        lossy: Bool,
        send: @escaping @Sendable (Message) -> PausingVerdict,
        waitUntilWritable: @escaping @Sendable () -> Void
    ) -> (Measurement, ProducerTally) {
        precondition(MemoryLayout<Message>.size == 128)
        let messages = spec.changes
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let result = Protected(ProducerTally())
        let swapped = spec.injectFault && messages >= 3
        let thread = Thread {
            ready.signal()
            go.wait()
            var tally = ProducerTally()
            var inPauses = 0
            let switchesAtStart = threadVoluntarySwitches()
            var last = now()
            for sequence in 1...messages {
                let stamp = swapped && (sequence == 2 || sequence == 3) ? 5 - sequence : sequence
                let verdict = send(Message(stamp: stamp))
                let at = now()
                let took = at &- last
                tally.maxSendNanos = max(tally.maxSendNanos, took)
                if took > 1_000_000 { tally.slowSends &+= 1 }
                last = at
                switch verdict {
                case .sent: tally.accepted &+= 1
                case .dropped: tally.dropped &+= 1
                case .refused: tally.refused &+= 1
                case .pause:
                    tally.accepted &+= 1
                    tally.pauses &+= 1
                    let before = threadVoluntarySwitches()
                    waitUntilWritable()
                    inPauses &+= (threadVoluntarySwitches() ?? 0) &- (before ?? 0)
                    last = now()
                }
            }
            tally.endedAt = now()
            if let switchesAtStart, let switches = threadVoluntarySwitches() {
                tally.blockedSends = switches - switchesAtStart - inPauses
            }
            let counted = tally
            result.withLock { $0 = counted }
            finished.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
        ready.wait()
        let memory = MemoryProbe.start()
        let switches = ContextSwitches.now()
        let start = now()
        go.signal()
        finished.wait()
        let tally = result.withLock { $0 }
        let measurement = pausingMeasurement(
            spec, sink: sink, tally: tally, lossy: lossy, start: start, memory: memory, switches: switches)
        return (measurement, tally)
    }
    /// Once a pausing row's producer returned: waits for the consumer to have every accepted
    /// message, and measures and checks what it got: `lossy` rows may lose messages (each one
    /// counted as `.dropped`), the others none.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func pausingMeasurement(
        _ spec: RunSpec, sink: MessageSink, tally: ProducerTally, lossy: Bool, start: UInt64, memory: MemoryProbe,
        switches: Int
    ) -> Measurement {
        let messages = spec.changes
        sink.expect(tally.accepted)
        let timeout = max(120, Double(messages) * Double(spec.consumerWorkNanos + 20_000) / 1e9)
        let arrived = sink.wait(timeoutSeconds: timeout)
        let growth = memory.peakGrowth()
        var measurement = Measurement(
            changes: messages,
            elapsedNanos: (arrived ? sink.finishedAt : now()) &- start,
            sendNanos: tally.endedAt &- start,
            latencies: [],
            peakGrowthBytes: growth,
            hops: nil,
            deliveries: sink.count,
            failures: [])
        measurement.contextSwitches = ContextSwitches.since(switches)
        measurement.pauses = tally.pauses
        measurement.lost = messages - sink.count
        measurement.maxSendNanos = tally.maxSendNanos
        measurement.slowSends = tally.slowSends
        measurement.blockedSends = tally.blockedSends
        measurement.check(
            arrived, "not everything arrived within \(Int(timeout)) s: \(sink.count) of \(tally.accepted)")
        measurement.check(tally.refused == 0, "\(tally.refused) sends refused")
        measurement.check(sink.outOfOrder == 0, "\(sink.outOfOrder) messages arrived out of order or twice")
        measurement.check(sink.gaps == 0, "\(sink.gaps) gaps in the stamps")
        if lossy {
            measurement.check(
                sink.count + tally.dropped == messages,
                "the consumer got \(sink.count) + \(tally.dropped) dropped != \(messages) sent")
        } else {
            measurement.check(
                sink.count == messages && tally.dropped == 0 && sink.lastStamp == messages,
                "the consumer got \(sink.count) of \(messages), the last stamp \(sink.lastStamp)")
        }
        return measurement
    }
}

/// The pausing-producer rows: one producer, a consumer that spins `work` per message.
func pausingProducerScenarios(_ messages: Int, work: UInt64, makeSpec: (Int, Int) -> RunSpec) -> [Scenario] {
    var spec = makeSpec(1, messages)
    spec.consumerWorkNanos = work
    func row(_ key: String, _ name: String, _ kind: Kind, _ run: @escaping @Sendable (RunSpec) -> Measurement)
        -> Scenario
    {
        Scenario(key: key, name: name, kind: kind, section: .flowControl, spec: spec, run: run)
    }
    return [
        row(
            "nonblocking-watermarks", "watermarks(low: 5000, high: 10000), pauses on shouldPause", .library,
            LibraryRows.pausingWatermarks),
        row(
            "nonblocking-writability-handler",
            "watermarks(low: 5000, high: 10000), follows onWritabilityChange(on: .immediate)", .library,
            LibraryRows.pausingWritabilityHandler),
        row("nonblocking-waiting", "waiting(capacity: 10000), send blocks", .library, LibraryRows.pausingWaiting),
        row("nonblocking-unbounded", "unbounded", .library, LibraryRows.pausingUnbounded),
        row("nonblocking-drop-newest", "dropNewest(capacity: 10000), loses", .library, LibraryRows.pausingDropNewest),
        row(
            "nonblocking-async-suspending-watermarks",
            "async: watermarks(low: 5000, high: 10000), await sendSuspending", .library,
            LibraryRows.asyncSuspendingWatermarks),
        row(
            "nonblocking-async-writability-changes",
            "async: watermarks(low: 5000, high: 10000), send, at a pause await writabilityChanges", .library,
            LibraryRows.asyncWritabilityChanges),
        row(
            "nonblocking-async-suspending-waiting", "async: waiting(capacity: 10000), await sendSuspending", .library,
            LibraryRows.asyncSuspendingWaiting),
        row(
            "nonblocking-async-stream", "async: AsyncStream (unbounded), yield", .baseline,
            LibraryRows.asyncStreamUnbounded),
        row(
            "nonblocking-floor", "floor: Mutex array + atomic backlog, resumed at 5000", .floor,
            LibraryRows.pausingFloor),
        row(
            "nonblocking-bytes-watermarks",
            "bytes: watermarks(low: 512 KiB, high: 1 MiB), weighing: payload bytes, pauses on shouldPause", .library,
            LibraryRows.pausingBytesWatermarks),
        row(
            "nonblocking-bytes-pipeline-watermarks",
            "bytes: map, then watermarks(low: 512 KiB, high: 1 MiB), weighing: payload bytes", .library,
            LibraryRows.pausingBytesPipelineWatermarks),
        row(
            "nonblocking-bytes-count-watermarks",
            "bytes: watermarks(low: 500, high: 1000) counted in messages", .library,
            LibraryRows.pausingBytesCountWatermarks),
        row(
            "nonblocking-bytes-floor", "bytes floor: Mutex array + atomic byte backlog, resumed at 512 KiB", .floor,
            LibraryRows.pausingBytesFloor),
    ]
}

/// Whether a flow-control row is one of the pausing-producer rows.
func isPausingProducerKey(_ key: String) -> Bool {
    key.hasPrefix("nonblocking-")
}

/// The pausing-producer rows as markdown.
func pausingProducerMarkdown(_ rows: [RowResult]) -> [String] {
    guard !rows.isEmpty else { return [] }
    let countFloor = rows.first { $0.key == "nonblocking-floor" }
    let bytesFloor = rows.first { $0.key == "nonblocking-bytes-floor" }
    var out: [String] = []
    out.append("")
    out.append(
        "### A producer that must not block (1 producer flat out, 128-byte messages; the consumer spins 1 µs per message; "
            + "at most 10 000 queued; `bytes` rows: payloads of 64–2 048 bytes, at most 1 MiB queued, against their own floor)"
    )
    out.append("")
    out.append(
        "| row | messages | total time | × floor | send ns/message | lost | peak RSS Δ | pauses | waits for room "
            + "| sends that gave up the core | longest send | sends > 1 ms |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    func spread(_ value: Spread?, _ show: (Double) -> String) -> String {
        guard let value else { return "—" }
        if value.min == value.max { return show(value.median) }
        return "\(show(value.median)) (\(show(value.min))–\(show(value.max)))"
    }
    for row in rows {
        let total = Double(row.changes)
        let time = spread(row.nanosPerChange) { nanos($0 * total) }
        // Each row against the floor of its messages: 128-byte messages, or byte payloads.
        let floor = isBytesRow(row.key) ? bytesFloor : countFloor
        let ratio = floor.map { format(row.nanosPerChange.median / $0.nanosPerChange.median, digits: 2) + "×" } ?? "—"
        out.append(
            "| \(row.name) | \(count(total)) | \(time) | \(ratio) | \(format(row.sendNanosPerChange.median)) | "
                + "\(spread(row.lost, count)) | \(spread(row.peakGrowthBytes, bytes)) | \(spread(row.pauses, count)) | "
                + "\(spread(row.waits, count)) | \(spread(row.blockedSends, count)) | \(spread(row.maxSendNanos, nanos)) | "
                + "\(spread(row.slowSends, count)) |"
        )
    }
    return out
}
