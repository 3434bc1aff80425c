// The writers rows (`--sections writers`, issue 42 item 2): one program, as a user would write
// it, in two shapes side by side. 4 writer threads write quotes flat out; three pipelines, started
// before the writers, follow them, each delivering on a serial queue of its own:
// `throttle(for: 50 ms, latest: true)`, `batch(count: 1000, every: 100 ms)` and `coalesce()`.
//
// - Observed: the writers write `@Observed var quote` of one model, observed three times.
// - Hub: the writers post the same quotes to one `Hub` channel the same three pipelines subscribe
//   to.
//
// Once every writer returned, each pipeline is finished (its stages hand on what they hold: the
// partial batch, the held throttle value) and the row waits until all three ended. The figures:
// the writers' wall time (release to the last writer's return), the total time (release to the
// end of the last pipeline) and the peak memory growth over both; the report sets the observed row
// against the hub row. The checks: the batching pipeline delivered every quote exactly once, in
// order per writer (and, observed, each change's `oldValue` is the previous change's `newValue`:
// the default `.old` option keeps old values through `batch`); the throttled and coalescing
// pipelines delivered each writer's quotes in increasing order and ended on the final quote; the
// coalescing pipeline accounted for every quote (its counts add up; observed, its chain too).
//
// "The final quote": for the observed row, the property's value once the writers returned. A hub
// has no such value: posts made at once from several threads may reach different subscribers in
// different orders (Hub's threading contract), so the hub row checks that each of those two
// pipelines ended on the last quote of some writer.

import Dispatch
import Foundation
import Receptionist

enum WritersRows {
    /// A quote as an app holds it: a price, who wrote it, and the writer's sequence number (from 1).
    struct Quote: Sendable, Equatable {
        var price: Double
        var sequence: Int
        var writer: Int

        /// The value of the property before any writer writes it (the harness's `Event.initial`).
        static let initial = Quote(price: 0, sequence: 0, writer: 0)

        /// The harness's form of the quote, for the consumers' checks (writer and sequence).
        var event: Event { Event(producer: writer, sequence: sequence, stamp: 0) }
    }

    /// The model of the observed row.
    final class Quotes: ObservableModel, @unchecked Sendable {
        // @unchecked: the only stored property is an @Observed (a reference to a locked box).
        @Observed var quote = Quote.initial
    }

    /// The writer threads of a row.
    static let writers = 4

    /// The three pipelines' checking consumers, each confined to its pipeline's queue.
    struct Consumers {
        /// Every quote exactly once, in order per writer (observed: the old→new chain too).
        let batched: Consumer
        /// Quotes in increasing order per writer.
        let throttled: Consumer
        /// Quotes in increasing order per writer, the counts adding up to every quote.
        let coalesced: Consumer
    }

    /// Shape A: three observations of `Quotes.quote`, written by the writers.
    static func observed(_ spec: RunSpec) -> Measurement {
        let model = Quotes()
        return row(
            spec, write: { model.quote = Quote($0) }, finalQuote: { model.quote },
            start: { consumers in
                let throttled = model.receptionist(for: \.quote)
                    .throttle(for: .milliseconds(50), latest: true)
                    .deliver(on: DispatchQueue(label: "benchmark.writers.throttle")) { change in
                        consumers.throttled.receive(change.newValue.event)
                    }
                let batched = model.receptionist(for: \.quote, options: [.old])
                    .batch(count: 1000, every: .milliseconds(100))
                    .deliver(on: DispatchQueue(label: "benchmark.writers.batch")) { changes in
                        for change in changes {
                            consumers.batched.receive(old: oldEvent(change), new: change.newValue.event, changes: 1)
                        }
                    }
                let coalescing = model.receptionist(for: \.quote, options: [.old])
                    .coalesce()
                    .deliver(on: DispatchQueue(label: "benchmark.writers.coalesce")) { change in
                        consumers.coalesced.receive(
                            old: oldEvent(change), new: change.newValue.event, changes: change.coalescedCount)
                    }
                return [throttled, batched, coalescing]
            })
    }

    /// Shape B: the same three pipelines on one `Hub` channel, posted to by the writers.
    static func hub(_ spec: RunSpec) -> Measurement {
        let hub = Hub()
        let quotes = Hub.Channel<Quote>("quotes")
        return row(
            spec, write: { hub.post(quotes, Quote($0)) }, finalQuote: { nil },
            start: { consumers in
                let throttled = hub.pipeline(for: quotes)
                    .throttle(for: .milliseconds(50), latest: true)
                    .deliver(on: DispatchQueue(label: "benchmark.writers.throttle")) { quote in
                        consumers.throttled.receive(quote.event)
                    }
                let batched = hub.pipeline(for: quotes)
                    .batch(count: 1000, every: .milliseconds(100))
                    .deliver(on: DispatchQueue(label: "benchmark.writers.batch")) { batch in
                        for quote in batch { consumers.batched.receive(quote.event) }
                    }
                // A coalesced post has no old value: the consumer keeps the one it got last, so
                // that the same check (`receive(old:new:changes:)`) counts every quote.
                let previous = Protected(Quote.initial.event)
                let coalescing = hub.pipeline(for: quotes)
                    .coalesce()
                    .deliver(on: DispatchQueue(label: "benchmark.writers.coalesce")) { coalesced in
                        let new = coalesced.latest.event
                        let old = previous.withLock { last in
                            defer { last = new }
                            return last
                        }
                        consumers.coalesced.receive(old: old, new: new, changes: coalesced.count)
                    }
                return [throttled, batched, coalescing]
            })
    }

    /// The old value of an observed change as the consumer checks it; a missing one (an
    /// observation without `.old`) breaks the chain check with a value no writer wrote.
    private static func oldEvent(_ change: ObservedChange<Quotes, Quote>) -> Event {
        change.oldValue?.event ?? Event(value: -1, stamp: 0)
    }

    /// Runs a row: `start` starts the three pipelines with their consumers, the writers `write`,
    /// then every pipeline is finished and the row waits for the three to end; then checks what
    /// they delivered. `finalQuote` is the value the throttled and coalescing pipelines must end
    /// on (`nil`: the last quote of any writer).
    private static func row(
        _ spec: RunSpec,
        write: @escaping @Sendable (Event) -> Void,
        finalQuote: () -> Quote?,
        start: (Consumers) -> [any DeliveryHandle]
    ) -> Measurement {
        // No latency samples: the figures are the writers' time, the total time and memory.
        var quiet = spec
        quiet.stampEvery = 1 << 40
        let consumers = Consumers(
            batched: Consumer(quiet), throttled: Consumer(quiet, order: .increasing),
            coalesced: Consumer(quiet, order: .increasing))
        let handles = start(consumers)
        let ended = Protected(Arrival(finishedAt: 0, allocationCount: 0))
        var measurement = runProducers(spec, consumer: consumers.batched, send: write) { timeout in
            let group = DispatchGroup()
            for handle in handles {
                group.enter()
                handle.finish {
                    let at = now()
                    let allocations = HeapAllocations.count
                    ended.withLock { arrival in
                        if at > arrival.finishedAt { arrival = Arrival(finishedAt: at, allocationCount: allocations) }
                    }
                    group.leave()
                }
            }
            guard group.wait(timeout: .now() + timeout) == .success else { return nil }
            return ended.withLock { $0 }
        }
        defer { for handle in handles { handle.cancel() } }
        guard measurement.failures.isEmpty || handles.allSatisfy(\.isFinished) else { return measurement }
        let batched = consumers.batched
        let throttled = consumers.throttled
        let coalesced = consumers.coalesced
        // `runProducers` reported the batching consumer's errors: say whose they are.
        let batchErrors = Set(batched.errors)
        measurement.failures = measurement.failures.map { batchErrors.contains($0) ? "batch: \($0)" : $0 }
        measurement.check(batched.count == spec.changes, "batch delivered \(batched.count) of \(spec.changes) quotes")
        measurement.check(
            coalesced.count == spec.changes, "coalesce accounted for \(coalesced.count) of \(spec.changes) quotes")
        measurement.failures += coalesced.errors.map { "coalesce: \($0)" }
        measurement.failures += throttled.errors.map { "throttle: \($0)" }
        let final = finalQuote()?.event
        func isFinal(_ event: Event) -> Bool {
            if let final { return event == final }
            return event.sequence == spec.changes(of: event.producer)
        }
        let finalText = final.map { "the final quote \($0.value)" } ?? "a writer's last quote"
        measurement.check(
            isFinal(coalesced.last), "coalesce ended on \(coalesced.last.value), not on \(finalText)")
        measurement.check(
            isFinal(throttled.last), "throttle ended on \(throttled.last.value), not on \(finalText)")
        measurement.deliveries = handles.reduce(0) { $0 + $1.statistics.delivered }
        return measurement
    }
}

extension WritersRows.Quote {
    /// The quote a writer makes for the harness's change `event`: its writer and sequence number,
    /// and a price that moves with the sequence.
    @inline(__always)
    init(_ event: Event) {
        self.init(price: 100 + Double(event.sequence) * 0.01, sequence: event.sequence, writer: event.producer)
    }
}

/// The writers section: the observed row and the hub row, 4 writers sharing `changes` quotes.
func writersScenarios(_ changes: Int, makeSpec: (Int, Int) -> RunSpec) -> [Scenario] {
    let spec = makeSpec(WritersRows.writers, changes)
    return [
        Scenario(
            key: "writers-observed", name: "@Observed var quote, 3 observations (throttle, batch, coalesce)",
            kind: .library, section: .writers, spec: spec, run: WritersRows.observed),
        Scenario(
            key: "writers-hub", name: "Hub channel, the same 3 pipelines", kind: .library, section: .writers,
            spec: spec, run: WritersRows.hub),
    ]
}

/// The writers section as markdown: each row's figures, and the observed row over the hub row.
func writersMarkdown(_ rows: [RowResult]) -> [String] {
    guard !rows.isEmpty else { return [] }
    let hub = rows.first { $0.key == "writers-hub" }
    var out: [String] = []
    out.append("")
    out.append(
        "### Writers vs hub (4 writers flat out; throttle 50 ms, batch 1000 / 100 ms, coalesce, "
            + "each on a DispatchQueue of its own; finished once the writers returned)")
    out.append("")
    out.append(
        "| row | writers | quotes | writers' time | writers' ns/quote | total time | peak RSS Δ "
            + "| writers' time × hub | peak RSS Δ × hub | deliveries |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    func spread(_ value: Spread, scale: Double, _ show: (Double) -> String) -> String {
        let median = show(value.median * scale)
        if value.min == value.max { return median }
        return "\(median) (\(show(value.min * scale))–\(show(value.max * scale)))"
    }
    func ratio(_ mine: Double?, _ theirs: Double?) -> String {
        guard let mine, let theirs, theirs > 0 else { return "—" }
        return format(mine / theirs, digits: 2) + "×"
    }
    for row in rows {
        let quotes = Double(row.changes)
        out.append(
            "| \(row.name) | \(row.producers) | \(count(quotes)) | \(spread(row.sendNanosPerChange, scale: quotes, nanos)) | "
                + "\(format(row.sendNanosPerChange.median)) | \(spread(row.nanosPerChange, scale: quotes, nanos)) | "
                + "\(row.peakGrowthBytes.map { spread($0, scale: 1, bytes) } ?? "—") | "
                + "\(ratio(row.sendNanosPerChange.median, hub?.sendNanosPerChange.median)) | "
                + "\(ratio(row.peakGrowthBytes?.median, hub?.peakGrowthBytes?.median)) | \(count(row.deliveries)) |")
    }
    return out
}
