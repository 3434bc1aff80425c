// sensor-batching-demo: simulated sensors write samples from their own threads; one pipeline
// batches them (by count or time) into per-batch statistics, another coalesces them for a display
// that takes one update per frame. The demo ends by itself and verifies that batching lost
// nothing, kept each sensor's order, and that the display ended on the last sample.
//
//     swift run sensor-batching-demo [--sensors N] [--rate N] [--duration-ms MS] [--batch-count N]
//                                    [--batch-ms MS] [--display-hz HZ] [--noise X] [--quiet]

import DemoSupport
import Foundation
import Receptionist

// MARK: - Settings

struct Settings: Sendable {
    var sensors: Int
    /// Samples per second, all sensors together.
    var rate: Int
    var duration: Duration
    var batchCount: Int
    var batchInterval: Duration
    var displayHz: Double
    /// Amplitude of the uniform noise added to each reading, in °C.
    var noise: Double
    var quiet: Bool

    /// How long the display takes for one update.
    var frame: Duration { .nanoseconds(Int64(1e9 / displayHz)) }

    static func parse() -> Settings {
        var options = CommandLineOptions(
            command: "sensor-batching-demo",
            abstract: """
                Simulated sensors write samples, each from its own thread, into an ObservableValue.
                One pipeline batches them (.batch(count:every:)) into per-batch count, min, mean and max;
                another coalesces them (.coalesce()) for a display that takes one update per frame.
                Ends by itself and verifies that batching lost nothing and kept each sensor's order,
                and that the display ended on the last sample.
                """
        )
        let sensors = options.positiveInteger("--sensors", default: 3, help: "simulated sensors, one thread each")
        let rate = options.positiveInteger("--rate", default: 6_000, help: "samples per second, all sensors together")
        let duration = options.milliseconds("--duration-ms", default: .seconds(3), help: "how long the sensors run")
        let batchCount = options.positiveInteger("--batch-count", default: 256, help: "the largest batch")
        let batchInterval = options.milliseconds(
            "--batch-ms", default: .milliseconds(40), help: "the longest a batch stays open"
        )
        let displayHz = options.positiveNumber(
            "--display-hz", default: 30, help: "display updates per second, at least 1", valueName: "HZ"
        )
        let noise = options.nonNegativeNumber("--noise", default: 0.25, help: "noise on each reading, in °C")
        let quiet = options.flag("--quiet", help: "no live progress line")
        let parsed = options.parse()

        let settings = Settings(
            sensors: parsed[sensors], rate: parsed[rate], duration: parsed[duration],
            batchCount: parsed[batchCount], batchInterval: parsed[batchInterval],
            displayHz: parsed[displayHz], noise: parsed[noise], quiet: parsed[quiet]
        )
        if settings.rate > 10_000_000 { options.fail("--rate must be at most 10000000, got \(settings.rate)") }
        if settings.duration > .seconds(3_600) {
            let milliseconds = String(format: "%.0f", settings.duration.inSeconds * 1_000)
            options.fail("--duration-ms must be at most 3600000 (an hour), got \(milliseconds)")
        }
        if settings.sensors > 64 { options.fail("--sensors must be at most 64, got \(settings.sensors)") }
        if settings.displayHz < 1 { options.fail("--display-hz must be at least 1, got \(settings.displayHz)") }
        if settings.noise > 1_000 { options.fail("--noise must be at most 1000, got \(settings.noise)") }
        return settings
    }
}

// MARK: - Sensors

/// One reading of one sensor.
struct Sample: Sendable, Equatable {
    let sensor: Int
    /// Per sensor, from 0, one more for each sample.
    let sequence: Int
    let celsius: Double

    /// The value before any sensor wrote.
    static let none = Sample(sensor: -1, sequence: -1, celsius: 0)

    var label: String {
        self == .none ? "no sample" : String(format: "sensor %d #%d, %.2f °C", sensor, sequence, celsius)
    }
}

/// The sensors' side: how many samples each must produce and how many it did.
final class SensorBoard: Sendable {
    let settings: Settings
    /// Samples each sensor is to produce: the total for the rate and duration, shared out.
    let quotas: [Int]
    /// Samples written so far, all sensors together.
    let produced = Protected(0)
    private let sent: Protected<[Int]>

    init(settings: Settings) {
        self.settings = settings
        let total = max(1, Int((Double(settings.rate) * settings.duration.inSeconds).rounded()))
        quotas = (0..<settings.sensors).map { total / settings.sensors + ($0 < total % settings.sensors ? 1 : 0) }
        sent = Protected(Array(repeating: 0, count: settings.sensors))
    }

    /// Samples each sensor wrote (final once the sensors have returned).
    var sentPerSensor: [Int] { sent.withLock { $0 } }

    /// Writes sensor `sensor`'s samples into `latest`, spread evenly over the duration from
    /// `start`. Paced by sleeping at least 1 ms between rounds and writing the samples due in
    /// each round; a sensor that falls behind catches up, for at most 1 s past the duration.
    func run(sensor: Int, into latest: ObservableValue<Sample>, from start: ContinuousClock.Instant) {
        let clock = ContinuousClock()
        let quota = quotas[sensor]
        let perSecond = Double(quota) / settings.duration.inSeconds
        let hardStop = start + settings.duration + .seconds(1)
        let noise = settings.noise
        var count = 0
        rounds: while count < quota {
            let elapsed = (clock.now - start).inSeconds
            let due = min(quota, Int(elapsed * perSecond) + 1)
            while count < due {
                let wave = 0.8 * sin(2 * Double.pi * elapsed / 1.7 + Double(sensor))
                let celsius = 20 + 1.5 * Double(sensor) + wave + Double.random(in: -noise...noise)
                latest.value = Sample(sensor: sensor, sequence: count, celsius: celsius)
                count += 1
                produced.withLock { $0 += 1 }
                if count % 1_024 == 0 && clock.now >= hardStop { break rounds }
            }
            guard count < quota, clock.now < hardStop else { break }
            let nextDue = Double(count) / perSecond
            Thread.sleep(forTimeInterval: max(0.001, nextDue - (clock.now - start).inSeconds))
        }
        sent.withLock { $0[sensor] = count }
    }
}

// MARK: - Consumers

/// Count, min, mean and max of one batch.
struct BatchStatistics: Sendable {
    let count: Int
    let min: Double
    let mean: Double
    let max: Double

    init(_ batch: [Sample]) {
        var low = Double.infinity
        var high = -Double.infinity
        var sum = 0.0
        for sample in batch {
            low = Swift.min(low, sample.celsius)
            high = Swift.max(high, sample.celsius)
            sum += sample.celsius
        }
        count = batch.count
        min = low
        mean = sum / Double(Swift.max(1, batch.count))
        max = high
    }

    var description: String {
        String(format: "%d samples, min %.2f, mean %.2f, max %.2f °C", count, min, mean, max)
    }
}

/// What the batching pipeline's task block has seen. The task block runs on a serial queue; the
/// main thread reads snapshots for the progress line and the summary.
final class BatchLedger: Sendable {
    struct State: Sendable {
        var batches = 0
        var samples = 0
        /// Batches closed by count (the others closed by time, or by `finish()`).
        var full = 0
        var smallest = Int.max
        var largest = 0
        /// The sequence number expected next from each sensor.
        var nextSequence: [Int]
        /// Samples that did not carry the sequence number expected from their sensor.
        var outOfOrder = 0
        var lastSample: Sample?
        var lastBatch: BatchStatistics?
        var lastDelivery: ContinuousClock.Instant?
    }

    private let state: Protected<State>
    private let batchCount: Int

    init(sensors: Int, batchCount: Int) {
        state = Protected(State(nextSequence: Array(repeating: 0, count: sensors)))
        self.batchCount = batchCount
    }

    var snapshot: State { state.withLock { $0 } }

    /// The batching pipeline's task block.
    func record(_ batch: [Sample]) {
        let statistics = BatchStatistics(batch)
        let now = ContinuousClock.now
        state.withLock { state in
            state.batches += 1
            state.samples += batch.count
            if batch.count == batchCount { state.full += 1 }
            state.smallest = min(state.smallest, batch.count)
            state.largest = max(state.largest, batch.count)
            for sample in batch {
                let sensor = sample.sensor
                if state.nextSequence.indices.contains(sensor), state.nextSequence[sensor] == sample.sequence {
                    state.nextSequence[sensor] += 1
                } else {
                    state.outOfOrder += 1
                }
            }
            state.lastSample = batch.last
            state.lastBatch = statistics
            state.lastDelivery = now
        }
    }
}

/// A display that can take one update per frame: what the coalescing pipeline's task block has
/// shown.
final class Display: Sendable {
    struct State: Sendable {
        var updates = 0
        /// Samples the updates stood for (the sum of their `coalescedCount`).
        var samples = 0
        var mostInOneUpdate = 0
        var lastStoodFor = 0
        /// Updates whose `oldValue` was not the previous update's `newValue`.
        var chainBreaks = 0
        var shown: Sample
    }

    let frame: Duration
    private let state: Protected<State>

    init(frame: Duration, showing initial: Sample) {
        self.frame = frame
        state = Protected(State(shown: initial))
    }

    var snapshot: State { state.withLock { $0 } }

    /// The coalescing pipeline's task block: shows the latest sample, then holds the display
    /// until the end of its frame. Samples written meanwhile are folded into one waiting change.
    func show(_ change: ObservedChange<ObservableValue<Sample>, Sample>) {
        let begin = ContinuousClock.now
        state.withLock { state in
            if change.oldValue != state.shown { state.chainBreaks += 1 }
            state.updates += 1
            state.samples += change.coalescedCount
            state.mostInOneUpdate = max(state.mostInOneUpdate, change.coalescedCount)
            state.lastStoodFor = change.coalescedCount
            state.shown = change.newValue
        }
        // A real display would draw here; it can take the next update only at the next frame.
        let rest = frame - (ContinuousClock.now - begin)
        if rest > .zero { Thread.sleep(forTimeInterval: rest.inSeconds) }
    }
}

// MARK: - Run

/// `.milliseconds(40)` for a whole number of milliseconds, else `40.5 ms`.
func swiftLiteral(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let perMillisecond: Int64 = 1_000_000_000_000_000
    guard attoseconds % perMillisecond == 0 else { return Format.duration(duration) }
    return ".milliseconds(\(seconds * 1_000 + attoseconds / perMillisecond))"
}

let settings = Settings.parse()
let clock = ContinuousClock()
let latest = ObservableValue(Sample.none)
let board = SensorBoard(settings: settings)
let ledger = BatchLedger(sensors: settings.sensors, batchCount: settings.batchCount)
let display = Display(frame: settings.frame, showing: latest.value)
let progress = ProgressLine(enabled: !settings.quiet)

print(
    "sensor-batching-demo: \(settings.sensors) sensors, \(settings.rate) samples/s for "
        + "\(Format.duration(settings.duration)) (\(board.quotas.reduce(0, +)) samples)"
)
print(
    "  batching: .batch(count: \(settings.batchCount), every: \(swiftLiteral(settings.batchInterval))) "
        + "→ serial queue, per-batch count, min, mean, max"
)
print(
    "  display:  .coalesce() → a \(String(format: "%g", settings.displayHz)) Hz display "
        + "(one update per \(Format.duration(settings.frame)) frame; ×N: samples an update stood for)"
)

// Both pipelines observe the same value, so both see the samples in the order they were written.
// Batches hold values, not changes: a change keeps its box alive while a stage holds it.
let batching = latest.receptionist()
    .map(\.newValue)
    .batch(count: settings.batchCount, every: settings.batchInterval)
    .deliver(on: DispatchQueue(label: "sensor-batching-demo.batches")) { batch in ledger.record(batch) }
let displaying = latest.receptionist()
    .coalesce()
    .deliver(on: DispatchQueue(label: "sensor-batching-demo.display")) { change in display.show(change) }

/// The live progress line: elapsed time, samples produced, batched, and what the display shows.
func status(since start: ContinuousClock.Instant) -> String {
    let produced = board.produced.withLock { $0 }
    let batches = ledger.snapshot
    let shown = display.snapshot
    let reading = shown.shown == .none ? "–" : String(format: "%.2f °C", shown.shown.celsius)
    return "  \(Format.duration(clock.now - start))  produced \(produced)"
        + "  batched \(batches.samples) in \(batches.batches)"
        + "  display #\(shown.updates) ×\(shown.lastStoodFor) \(reading)"
}

let start = clock.now
let sensors = DispatchGroup()
for sensor in 0..<settings.sensors {
    sensors.enter()
    Thread {
        board.run(sensor: sensor, into: latest, from: start)
        sensors.leave()
    }.start()
}
while sensors.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
    progress.update(status(since: start))
}
let productionTime = clock.now - start

// Stop both pipelines without losing anything: the partial batch and the waiting display change
// are handed on, then delivery ends and each completion runs. Wait for both, but not for ever.
let delivered = DispatchGroup()
for handle: any DeliveryHandle in [batching, displaying] {
    delivered.enter()
    handle.finish { delivered.leave() }
}
let waitLimit = DispatchTime.now() + .seconds(10) + .nanoseconds(Int((settings.frame * 2).inSeconds * 1e9))
_ = delivered.wait(timeout: waitLimit)
progress.finish(settings.quiet ? nil : status(since: start))

// MARK: - Summary and verification

let produced = board.produced.withLock { $0 }
let sentPerSensor = board.sentPerSensor
let requested = board.quotas.reduce(0, +)
let batches = ledger.snapshot
let shown = display.snapshot
let batchStatistics = batching.statistics
let displayStatistics = displaying.statistics
let deliveryTime = (batches.lastDelivery ?? clock.now) - start
let dropped = batchStatistics.dropped + displayStatistics.dropped
let discarded = batchStatistics.discarded + displayStatistics.discarded
let final = latest.value
let indent = "         "

print(
    "summary: produced \(produced) samples"
        + (produced == requested ? "" : " of \(requested) requested (the sensors fell behind)")
        + " in \(Format.duration(productionTime)) (\(Format.rate(produced, over: productionTime, of: "samples")))"
)
print(
    indent + "delivered \(batches.samples) samples in \(batches.batches) batches, mean batch "
        + String(format: "%.1f", Double(batches.samples) / Double(max(1, batches.batches)))
        + " (smallest \(batches.batches == 0 ? 0 : batches.smallest), largest \(batches.largest); "
        + "\(batches.full) full, \(batches.batches - batches.full) closed by time or finish)"
)
if let last = batches.lastBatch {
    print(indent + "last batch: \(last.description)")
}
print(
    indent + "display: \(shown.updates) coalesced updates stood for \(shown.samples) samples (mean "
        + String(format: "%.1f", Double(shown.samples) / Double(max(1, shown.updates)))
        + " per update, most \(shown.mostInOneUpdate) in one); \(displayStatistics.coalesced) samples folded"
)
print(
    indent + "dropped \(dropped) (batching \(batchStatistics.dropped), display \(displayStatistics.dropped)), "
        + "discarded \(discarded)"
)
print(
    indent + "throughput \(Format.rate(batches.samples, over: deliveryTime, of: "samples")) "
        + "(first sample to last batch delivered, \(Format.duration(deliveryTime)))"
)
print(indent + "batching statistics: \(batchStatistics)")
print(indent + "display statistics:  \(displayStatistics)")

var failures: [String] = []
if !(batching.isFinished && displaying.isFinished) {
    failures.append("delivery did not finish within the wait limit")
}
if batches.samples != produced || sentPerSensor.reduce(0, +) != produced {
    failures.append("batch counts sum to \(batches.samples), but \(produced) samples were produced")
}
if batches.outOfOrder != 0 || batches.nextSequence != sentPerSensor {
    failures.append(
        "\(batches.outOfOrder) samples out of order; next sequence per sensor \(batches.nextSequence), "
            + "expected \(sentPerSensor)"
    )
}
if batchStatistics.delivered != batches.batches || displayStatistics.delivered != shown.updates
    || dropped != 0 || discarded != 0
{
    failures.append("the statistics do not account for every batch and display update")
}
if shown.shown != final || (batches.lastSample ?? .none) != final {
    failures.append(
        "the display shows \(shown.shown.label) and the last batch ends with \((batches.lastSample ?? .none).label), "
            + "but the last sample is \(final.label)"
    )
}
if shown.samples != produced || displayStatistics.delivered + displayStatistics.coalesced != produced {
    failures.append("the display updates stand for \(shown.samples) samples, not \(produced)")
}
if shown.chainBreaks != 0 {
    failures.append("\(shown.chainBreaks) display updates did not continue from the previous one")
}

if failures.isEmpty {
    print(
        "verified: batch counts sum to \(batches.samples) == \(produced) samples produced; "
            + "per-sensor order kept (\(settings.sensors) sensors); display ended on the last sample (\(final.label))"
    )
    exit(0)
} else {
    print("NOT verified: " + failures.joined(separator: "; "))
    exit(1)
}
