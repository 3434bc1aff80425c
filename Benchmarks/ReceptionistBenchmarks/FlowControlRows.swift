// The rows of issue 34, item 3: do pipelines with stages keep up with their writers? One stream
// of quotes, written by 4 threads flat out, feeds three pipelines: `map(\.newValue)
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
        /// The statistics of the throttled pipeline's intake (what waited for its stages), where
        /// the row can read them.
        var throttledIntakeStatistics: () -> ReceptionistStatistics? = { nil }
    }

    /// Three observations of one `@Observed var quote`, as the issue wrote them:
    /// `map(\.newValue)`.
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
                    throttledIntakeStatistics: { throttled.intakeStatistics })
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
                    throttledStatistics: { throttled.statistics })
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
        measurement.throttledMaxPending = setup.throttledStatistics().maxPending
        measurement.throttledIntakeMaxPending = setup.throttledIntakeStatistics()?.maxPending
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
            + "| throttled: max pending | max waiting for its stages | deliveries |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    func spread(_ value: Spread?, _ show: (Double) -> String) -> String {
        value.map { "\(show($0.median)) (\(show($0.min))–\(show($0.max)))" } ?? "—"
    }
    for row in rows {
        out.append(
            "| \(row.name) | \(row.producers) | \(count(Double(row.changes))) | \(spread(row.oldestShownNanos, nanos)) | "
                + "\(spread(row.lagAfterLastWriteNanos, nanos)) | \(spread(row.peakGrowthBytes, bytes)) | "
                + "\(format(row.sendNanosPerChange.median)) | \(spread(row.throttledMaxPending, count)) | "
                + "\(spread(row.throttledIntakeMaxPending, count)) | \(count(row.deliveries)) |")
    }
    return out
}
