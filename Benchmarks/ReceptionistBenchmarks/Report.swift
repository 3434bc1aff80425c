// Turns the repetitions into rows (median and spread), the ratios, the targets the library must
// meet, and prints them as Markdown tables or JSON.

import Foundation

// MARK: - Aggregation

/// The median and the range of one figure over the repetitions.
struct Spread: Codable, Sendable {
    var median: Double
    var min: Double
    var max: Double

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first!
        max = sorted.last!
    }
}

/// One row of the report.
struct RowResult: Codable, Sendable {
    let id: String
    let key: String
    let name: String
    let kind: Kind
    let section: Section
    let producers: Int
    let changes: Int
    let repetitions: Int
    /// Wall time from the producers' start to the consumer's last change, per change.
    let nanosPerChange: Spread
    let changesPerSecond: Double
    /// What the producer threads spent in `send`, per change (until the last producer finished).
    let sendNanosPerChange: Spread
    /// Delivery latency of the sampled changes (medians over the repetitions).
    let latencyP50Nanos: Double?
    let latencyP99Nanos: Double?
    let latencySamples: Int
    let peakGrowthBytes: Spread?
    /// Work items submitted to the target (per change for the per-change baselines).
    let hops: Double?
    /// Task block runs: changes, batches or coalesced changes.
    let deliveries: Double
    /// Swift heap objects allocated per change in the measured part of the run (see
    /// HeapAllocations.swift); `nil` without the counter.
    let allocationsPerChange: Spread?
    /// For rows that record whether the consumer saw the final value: in how many repetitions it
    /// did not, and out of how many.
    let finalValueMisses: Int?
    let finalValueRuns: Int?
    /// For the `Observations` row: emissions that repeated the previous value, over all repetitions.
    let repeatedValues: Int?
    /// For unordered rows (a task per change): changes that arrived after a later change of the
    /// same producer (recorded, not failed).
    let outOfOrder: Spread?
    /// For the waiting-buffer row: how many times the producer waited for room.
    let waits: Spread?
    /// Context switches of the process per change (voluntary and involuntary).
    let contextSwitchesPerChange: Spread?
    /// Flow-control rows (FlowControlRows.swift).
    let oldestShownNanos: Spread?
    let lagAfterLastWriteNanos: Spread?
    let throttledMaxPending: Spread?
    let maxWaitingForStages: Spread?
    /// Rows of a producer that must not block (FlowControlRows.swift).
    let pauses: Spread?
    let lost: Spread?
    let maxSendNanos: Spread?
    let slowSends: Spread?
    let blockedSends: Spread?
    /// `DispatchQueue.async` per change, divided by this row (throughput rows).
    var speedupVsDispatchAsync: Double?
    /// This row divided by the hand-written floor (the coalescing floor for coalescing rows).
    var ratioToFloor: Double?
    let failures: [String]

    init(_ scenario: Scenario, _ runs: [Measurement]) {
        id = scenario.id
        key = scenario.key
        name = scenario.name
        kind = scenario.kind
        section = scenario.section
        producers = scenario.spec.producers
        changes = scenario.spec.changes
        repetitions = runs.count
        nanosPerChange = Spread(runs.map(\.nanosPerChange))!
        changesPerSecond = 1e9 / nanosPerChange.median
        sendNanosPerChange = Spread(runs.map(\.sendNanosPerChange))!
        let percentiles = runs.compactMap { run -> (Double, Double)? in
            guard !run.latencies.isEmpty else { return nil }
            let sorted = run.latencies.sorted()
            return (Double(sorted[sorted.count / 2]), Double(sorted[min(sorted.count - 1, sorted.count * 99 / 100)]))
        }
        latencyP50Nanos = Spread(percentiles.map(\.0))?.median
        latencyP99Nanos = Spread(percentiles.map(\.1))?.median
        latencySamples = runs.map(\.latencies.count).max() ?? 0
        peakGrowthBytes = Spread(runs.compactMap(\.peakGrowthBytes).map(Double.init))
        hops = Spread(runs.compactMap(\.hops).map(Double.init))?.median
        deliveries = Spread(runs.map { Double($0.deliveries) })!.median
        allocationsPerChange = Spread(runs.compactMap(\.allocationsPerChange))
        let finalValueRecords = runs.compactMap(\.finalValueMissed)
        finalValueRuns = finalValueRecords.isEmpty ? nil : finalValueRecords.count
        finalValueMisses = finalValueRecords.isEmpty ? nil : finalValueRecords.filter { $0 }.count
        let repeats = runs.compactMap(\.repeatedValues)
        repeatedValues = repeats.isEmpty ? nil : repeats.reduce(0, +)
        outOfOrder = Spread(runs.compactMap(\.outOfOrder).map(Double.init))
        waits = Spread(runs.compactMap(\.waits).map(Double.init))
        contextSwitchesPerChange = Spread(
            runs.compactMap { run in run.contextSwitches.map { Double($0) / Double(max(run.changes, 1)) } })
        oldestShownNanos = Spread(runs.compactMap(\.oldestShownNanos).map { Double($0) })
        lagAfterLastWriteNanos = Spread(runs.compactMap(\.lagAfterLastWriteNanos).map { Double($0) })
        throttledMaxPending = Spread(runs.compactMap(\.throttledMaxPending).map(Double.init))
        maxWaitingForStages = Spread(runs.compactMap(\.maxWaitingForStages).map(Double.init))
        pauses = Spread(runs.compactMap(\.pauses).map(Double.init))
        lost = Spread(runs.compactMap(\.lost).map(Double.init))
        maxSendNanos = Spread(runs.compactMap(\.maxSendNanos).map { Double($0) })
        slowSends = Spread(runs.compactMap(\.slowSends).map(Double.init))
        blockedSends = Spread(runs.compactMap(\.blockedSends).map(Double.init))
        failures = Array(Set(runs.flatMap(\.failures))).sorted()
    }

    /// Whether the row coalesces (its floor is the coalescing floor).
    var isCoalescing: Bool { isCoalescingKey(key) }

    /// For unordered rows: "123 of 1000k changes (min–max)"; "—" for the others.
    var outOfOrderSummary: String {
        guard let outOfOrder else { return "—" }
        return "\(count(outOfOrder.median)) of \(count(Double(changes))) changes "
            + "(\(count(outOfOrder.min))–\(count(outOfOrder.max)))"
    }

    /// "seen 5/5", "missed 1/5", or "—" for rows that do not record it; with the repeated
    /// emissions for the rows that count them.
    var finalValueSummary: String {
        guard let runs = finalValueRuns, let misses = finalValueMisses else { return "—" }
        let summary = misses == 0 ? "seen \(runs)/\(runs)" : "missed \(misses)/\(runs)"
        guard let repeatedValues, repeatedValues > 0 else { return summary }
        return summary + "; \(repeatedValues) repeated value\(repeatedValues == 1 ? "" : "s")"
    }
}

/// The rows whose changes coalesce, measured against the coalescing floor.
func isCoalescingKey(_ key: String) -> Bool {
    key.hasPrefix("coalesc") || key == "observations"
}

/// Fills in the ratios of the throughput rows.
func addRatios(_ rows: inout [RowResult]) {
    func median(_ key: String, _ section: Section, _ producers: Int) -> Double? {
        rows.first { $0.key == key && $0.section == section && $0.producers == producers }?.nanosPerChange.median
    }
    for index in rows.indices where rows[index].section == .throughput {
        let row = rows[index]
        if let async = median("dispatch-async", row.section, row.producers) {
            rows[index].speedupVsDispatchAsync = async / row.nanosPerChange.median
        }
        let floorKey = row.isCoalescing ? "coalescing-floor" : "floor"
        if let floor = median(floorKey, row.section, row.producers) {
            rows[index].ratioToFloor = row.nanosPerChange.median / floor
        }
    }
}

// MARK: - Targets

/// One target the library must meet, as measured in this run.
struct TargetResult: Codable, Sendable {
    let target: String
    let measured: String
    /// `nil` when a row it needs was not run (`--filter`, `--sections`).
    let met: Bool?
}

func evaluateTargets(_ rows: [RowResult]) -> [TargetResult] {
    func row(_ section: Section, _ key: String, _ producers: Int = 1) -> RowResult? {
        rows.first { $0.section == section && $0.key == key && $0.producers == producers }
    }
    var results: [TargetResult] = []
    func add(_ target: String, _ measured: String?, _ met: Bool?) {
        results.append(TargetResult(target: target, measured: measured ?? "not run", met: measured == nil ? nil : met))
    }

    for p in [1, 2] {
        let lossless = row(.throughput, "receptionist-dispatch", p)
        let async = row(.throughput, "dispatch-async", p)
        let floor = row(.throughput, "floor", p)
        if let lossless, let async {
            let speedup = async.nanosPerChange.median / lossless.nanosPerChange.median
            add(
                "lossless → DispatchQueue ≥ 5× faster than DispatchQueue.async per change (\(p)P)",
                "\(format(speedup))× (\(nanos(lossless.nanosPerChange.median)) vs \(nanos(async.nanosPerChange.median)))",
                speedup >= 5)
        } else {
            add("lossless → DispatchQueue ≥ 5× faster than DispatchQueue.async per change (\(p)P)", nil, nil)
        }
        if let lossless, let floor {
            let ratio = lossless.nanosPerChange.median / floor.nanosPerChange.median
            add(
                "lossless → DispatchQueue within 1.5× of the hand-written floor (\(p)P)",
                "\(format(ratio))× (\(nanos(lossless.nanosPerChange.median)) vs \(nanos(floor.nanosPerChange.median)))",
                ratio <= 1.5)
        } else {
            add("lossless → DispatchQueue within 1.5× of the hand-written floor (\(p)P)", nil, nil)
        }
    }
    for p in [1, 2] {
        let target = "lossless → OperationQueue ≥ 20× faster than addOperation per change (\(p)P)"
        if let lossless = row(.throughput, "receptionist-operation", p),
            let baseline = row(.throughput, "operation-add", p)
        {
            let speedup = baseline.nanosPerChange.median / lossless.nanosPerChange.median
            add(
                target,
                "\(format(speedup))× (\(nanos(lossless.nanosPerChange.median)) vs \(nanos(baseline.nanosPerChange.median)))",
                speedup >= 20)
        } else {
            add(target, nil, nil)
        }
    }
    for (key, form) in [("coalesce", "@Observed"), ("coalesce-box", "ObservableValue")] {
        for p in [1, 2] {
            let target = "coalescing (\(form)) within 1.5× of the hand-written coalescing floor (\(p)P)"
            if let coalesce = row(.throughput, key, p), let floor = row(.throughput, "coalescing-floor", p) {
                let ratio = coalesce.nanosPerChange.median / floor.nanosPerChange.median
                add(
                    target,
                    "\(format(ratio))× (\(nanos(coalesce.nanosPerChange.median)) vs \(nanos(floor.nanosPerChange.median)))",
                    ratio <= 1.5)
            } else {
                add(target, nil, nil)
            }
        }
    }
    do {
        let target =
            "coalescing: memory flat regardless of event count (flood, peak growth at 10× the changes ≤ at 1× + 1 MiB)"
        if let one = row(.flood, "coalesce")?.peakGrowthBytes, let ten = row(.flood, "coalesce-10x")?.peakGrowthBytes {
            add(
                target,
                "\(bytes(one.median)) at \(row(.flood, "coalesce")!.changes), \(bytes(ten.median)) at \(row(.flood, "coalesce-10x")!.changes)",
                ten.median <= one.median + 1_048_576)
        } else {
            add(target, nil, nil)
        }
    }
    do {
        let coalescing = rows.filter { $0.key.hasPrefix("coalesce") }
        let broken = coalescing.filter { !$0.failures.isEmpty }
        add(
            "coalescing: the final value always delivered",
            coalescing.isEmpty
                ? nil
                : "\(coalescing.count - broken.count) of \(coalescing.count) coalescing rows ended on the final value, chain and order intact",
            broken.isEmpty)
    }
    for p in [1, 2] {
        let target = "batch 1000 / 10 ms: per-change cost within 2× of the lossless receptionist (\(p)P)"
        if let batch = row(.throughput, "batch", p), let lossless = row(.throughput, "receptionist-dispatch", p) {
            let ratio = batch.nanosPerChange.median / lossless.nanosPerChange.median
            add(
                target,
                "\(format(ratio))× (\(nanos(batch.nanosPerChange.median)) vs \(nanos(lossless.nanosPerChange.median)))",
                ratio <= 2)
        } else {
            add(target, nil, nil)
        }
    }
    for p in [1, 2] {
        let target = "batch 1000 / 10 ms at light load: p50 latency ≤ the 10 ms interval (\(p)P)"
        if let p50 = row(.paced, "batch", p)?.latencyP50Nanos {
            add(target, "p50 \(nanos(p50))", p50 <= 10_000_000)
        } else {
            add(target, nil, nil)
        }
    }
    for (key, baselineKey, label) in [
        ("receptionist-dispatch", "dispatch-async", "DispatchQueue"), ("receptionist-main", "main-async", "main queue"),
    ] {
        for p in [1, 2] {
            let target =
                "paced: lossless → \(label) p50 within 2 µs of per-change \(baselineKey == "dispatch-async" ? "DispatchQueue" : "DispatchQueue.main").async (\(p)P)"
            if let mine = row(.paced, key, p)?.latencyP50Nanos,
                let theirs = row(.paced, baselineKey, p)?.latencyP50Nanos
            {
                add(
                    target, "p50 \(nanos(mine)) vs \(nanos(theirs)) (\(signedNanos(mine - theirs)))",
                    mine - theirs <= 2_000)
            } else {
                add(target, nil, nil)
            }
        }
    }
    do {
        let target =
            "flood, slow consumer: bounded (dropOldest 1024) peak growth ≤ the configured buffer (+ 1 MiB of process noise)"
        if let bounded = row(.flood, "bounded")?.peakGrowthBytes {
            // The waiting changes, plus the segment a drain holds and the spare (segments of 256).
            let buffer = Double((LibraryRows.boundedCapacity + 2 * 256) * MemoryLayout<Event>.stride)
            add(
                target,
                "\(bytes(bounded.median)) (max \(bytes(bounded.max))); buffer ≤ \(bytes(buffer)) "
                    + "incl. the segment a drain holds and the spare",
                bounded.max <= buffer + 1_048_576)
        } else {
            add(target, nil, nil)
        }
    }
    do {
        let target = "flood, slow consumer: unbounded receptionist peak growth ≤ the hand-written floor's"
        if let mine = row(.flood, "receptionist-dispatch")?.peakGrowthBytes,
            let floor = row(.flood, "floor")?.peakGrowthBytes
        {
            add(target, "\(bytes(mine.median)) vs floor \(bytes(floor.median))", mine.median <= floor.median)
        } else {
            add(target, nil, nil)
        }
    }
    results += evaluateIssue12Targets(rows)
    results += evaluateIssue13Targets(rows)
    results += evaluateIssue18Targets(rows)
    return results
}

/// The flood target of the waiting policy: nothing lost, peak growth within its buffer.
private func evaluateIssue13Targets(_ rows: [RowResult]) -> [TargetResult] {
    var results: [TargetResult] = []
    do {
        let target =
            "(issue 13) flood, slow consumer: waiting(1024) loses nothing and its peak growth ≤ the configured buffer (+ 1 MiB of process noise)"
        if let waiting = rows.first(where: { $0.section == .flood && $0.key == "waiting" }),
            let growth = waiting.peakGrowthBytes
        {
            // As for dropOldest: the waiting changes, plus the segment a drain holds and the spare.
            let buffer = Double((LibraryRows.waitingCapacity + 2 * 256) * MemoryLayout<Event>.stride)
            let lossless = waiting.failures.isEmpty && waiting.deliveries == Double(waiting.changes)
            results.append(
                TargetResult(
                    target: target,
                    measured: "\(lossless ? "every change delivered once, in order" : "changes lost or reordered"); "
                        + "\(bytes(growth.median)) (max \(bytes(growth.max))); buffer ≤ \(bytes(buffer)) "
                        + "incl. the segment a drain holds and the spare; "
                        + "\(waiting.waits.map { count($0.median) } ?? "?") waits",
                    met: lossless && growth.max <= buffer + 1_048_576))
        } else {
            results.append(TargetResult(target: target, measured: "not run", met: nil))
        }
    }
    return results
}

/// The targets of back-pressure behind stages: nothing lost, peak growth within the bound.
private func evaluateIssue18Targets(_ rows: [RowResult]) -> [TargetResult] {
    var results: [TargetResult] = []
    // What may wait, in elements: the capacity in front of the stages, a segment the intake's
    // drain took (at most the capacity), outputs standing for the capacity behind the stages plus
    // one output (a batch) and the segment the delivery's drain took; plus a segment of 256 and
    // its spare per buffer. Stage events and outputs are at most 64 bytes each.
    let mapBound = Double(4 * (LibraryRows.stagedWaitingCapacity + 2 * 256) * 64)
    let batchBound = Double(
        (4 * LibraryRows.batchWaitingCapacity + 2 * LibraryRows.backPressureBatchSize) * MemoryLayout<Event>.stride
            + 4 * 256 * 64)
    for (key, bound) in [("waiting-map", mapBound), ("waiting-batch", batchBound)] {
        let target =
            "(issue 18) back-pressure, \(key): lossless, peak growth ≤ \(bytes(bound)) (+ 1 MiB of process noise) for 1, 2 and 8 producers"
        let measured = rows.filter { $0.section == .backPressure && $0.key == key }
        guard !measured.isEmpty else {
            results.append(TargetResult(target: target, measured: "not run", met: nil))
            continue
        }
        let lossless = measured.allSatisfy { $0.failures.isEmpty && $0.deliveries > 0 }
        let growths = measured.map { ($0.producers, $0.peakGrowthBytes?.max) }
        let within = growths.allSatisfy { $0.1.map { $0 <= bound + 1_048_576 } ?? false }
        results.append(
            TargetResult(
                target: target,
                measured:
                    "\(lossless ? "every change delivered once, in order" : "changes lost or reordered"); max peak growth "
                    + growths.map { "\($0.0)P \($0.1.map(bytes) ?? "?")" }.joined(separator: ", "),
                met: lossless && within))
    }
    return results
}

/// The targets of observations of properties: cost against the references, allocations.
private func evaluateIssue12Targets(_ rows: [RowResult]) -> [TargetResult] {
    func row(_ key: String, _ producers: Int) -> RowResult? {
        rows.first { $0.section == .throughput && $0.key == key && $0.producers == producers }
    }
    var results: [TargetResult] = []
    /// `mine` ≤ `limit` × `reference`, by median ns/change.
    func ratio(_ target: String, _ mine: RowResult?, _ reference: RowResult?, limit: Double, note: String = "") {
        guard let mine, let reference else {
            results.append(TargetResult(target: "(issue 12) " + target, measured: "not run", met: nil))
            return
        }
        let value = mine.nanosPerChange.median / reference.nanosPerChange.median
        results.append(
            TargetResult(
                target: "(issue 12) " + target,
                measured:
                    "\(format(value, digits: 2))× (\(nanos(mine.nanosPerChange.median)) vs \(nanos(reference.nanosPerChange.median)))"
                    + note,
                met: value <= limit))
    }

    for (key, form) in [("observed-lossless", "@Observed"), ("box-lossless", "ObservableValue")] {
        for p in [1, 2] {
            ratio(
                "lossless \(form) → DispatchQueue ≤ 1.5× receptionist → DispatchQueue (\(p)P)", row(key, p),
                row("receptionist-dispatch", p), limit: 1.5)
            ratio(
                "lossless \(form) → DispatchQueue ≤ 2× the hand-written floor (\(p)P)", row(key, p), row("floor", p),
                limit: 2)
        }
    }
    for (key, form) in [("coalesce", "@Observed"), ("coalesce-box", "ObservableValue")] {
        for p in [1, 2] {
            ratio(
                "coalescing (\(form)) ≤ 2× the hand-written coalescing floor (\(p)P)", row(key, p),
                row("coalescing-floor", p), limit: 2)
            let observations = row("observations", p)
            let misses =
                observations.flatMap { row in
                    row.finalValueMisses.map {
                        "; Observations missed the final value in \($0) of \(row.finalValueRuns!) and repeated "
                            + "\(row.repeatedValues ?? 0) value(s)"
                    }
                } ?? ""
            // Faster: strictly below 1×.
            ratio(
                "coalescing (\(form)) faster than Observation's Observations (\(p)P)", row(key, p), observations,
                limit: 1.0.nextDown, note: misses)
        }
    }
    for p in [1, 2] {
        ratio(
            "snapshot of 2 @Observed ≤ 1.5× lossless @Observed (\(p)P)", row("snapshot", p),
            row("observed-lossless", p), limit: 1.5)
    }
    let allocationRows = [
        ("observed-lossless", "lossless @Observed"), ("box-lossless", "lossless ObservableValue"),
        ("snapshot", "snapshot of 2 @Observed"), ("coalesce", "@Observed + coalesce()"),
        ("coalesce-box", "ObservableValue + coalesce()"),
    ]
    for (key, form) in allocationRows {
        let target = "(issue 12) \(form): steady-state allocs/change ≤ 1/64"
        let measured = [1, 2].compactMap { p -> (Int, Double)? in
            row(key, p)?.allocationsPerChange.map { (p, $0.max) }
        }
        if measured.isEmpty {
            results.append(TargetResult(target: target, measured: "not run (or no allocation counter)", met: nil))
        } else {
            results.append(
                TargetResult(
                    target: target,
                    measured: measured.map { "\($0.0)P: \(allocationsPerChange($0.1)) (worst repetition)" }.joined(
                        separator: ", "),
                    met: measured.allSatisfy { $0.1 <= 1.0 / 64 }))
        }
    }
    return results
}

// MARK: - Formatting

func format(_ value: Double, digits: Int = 1) -> String {
    String(format: "%.\(digits)f", value)
}

func nanos(_ value: Double) -> String {
    switch abs(value) {
    case ..<1_000: return "\(format(value)) ns"
    case ..<1_000_000: return "\(format(value / 1_000, digits: value < 100_000 ? 2 : 1)) µs"
    case ..<1_000_000_000: return "\(format(value / 1_000_000, digits: 2)) ms"
    default: return "\(format(value / 1_000_000_000, digits: 2)) s"
    }
}

func signedNanos(_ value: Double) -> String {
    (value >= 0 ? "+" : "−") + nanos(abs(value))
}

func bytes(_ value: Double) -> String {
    switch value {
    case ..<1024: return "\(Int(value)) B"
    case ..<(1024 * 1024): return "\(format(value / 1024)) KiB"
    default: return "\(format(value / 1_048_576)) MiB"
    }
}

func count(_ value: Double) -> String {
    switch value {
    case ..<10_000: return "\(Int(value))"
    case ..<10_000_000: return "\(format(value / 1_000, digits: value < 100_000 ? 1 : 0))k"
    default: return "\(format(value / 1_000_000, digits: 1))M"
    }
}

/// Allocations per change: "0", "1/256" below 0.1 (the reciprocal, rounded), else decimals.
func allocationsPerChange(_ value: Double) -> String {
    switch value {
    case ...0: return "0"
    case ..<0.1: return "1/\(Int((1 / value).rounded()))"
    case ..<10: return format(value, digits: 2)
    default: return format(value)
    }
}

func rate(_ perSecond: Double) -> String {
    perSecond >= 1_000_000 ? "\(format(perSecond / 1_000_000, digits: 2))M" : "\(format(perSecond / 1_000, digits: 0))k"
}

// MARK: - Report

/// The machine and the load the run saw.
struct Machine: Codable, Sendable {
    let cpu: String
    let cores: Int
    let kernel: String
    let loadAverageAtStart: String
    let loadAverageAtEnd: String

    static func describe(loadAtStart: String) -> Machine {
        let cpuinfo = Memory.readFile("/proc/cpuinfo") ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let kernel = (Memory.readFile("/proc/sys/kernel/osrelease") ?? "unknown").trimmingCharacters(
            in: .whitespacesAndNewlines)
        return Machine(
            cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount, kernel: kernel,
            loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadAverage())
    }
}

func loadAverage() -> String {
    (Memory.readFile("/proc/loadavg") ?? "").split(separator: " ").prefix(3).joined(separator: " ")
}

/// Reference costs measured on this machine in this run.
struct Calibration: Codable, Sendable {
    /// `nil` where `Synchronization` is unavailable.
    let mutexIncrementNanos: Double?
    let clockReadNanos: Double
}

/// A row this platform could not run, and why (an API newer than the package's deployment floor).
struct SkippedRow: Codable, Sendable {
    let id: String
    let name: String
    let section: Section
    let producers: Int
    let reason: String

    init(_ scenario: Scenario, reason: String) {
        id = scenario.id
        name = scenario.name
        section = scenario.section
        producers = scenario.spec.producers
        self.reason = reason
    }
}

struct Report: Codable, Sendable {
    var tool = "receptionist-benchmarks"
    let mode: String
    let command: String
    let repetitions: Int
    let machine: Machine
    let calibration: Calibration
    /// What allocs/change counts, and the counter's self-test.
    let allocationCounter: String
    let rows: [RowResult]
    let skipped: [SkippedRow]
    let targets: [TargetResult]
    /// The contention rows that collapsed (``collapseViolations(_:)``); empty if none did.
    let collapses: [String]
    let failures: [String]
    let durationSeconds: Double

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    func markdown() -> String {
        var out: [String] = []
        out.append("`\(command)`")
        out.append("")
        out.append(
            "receptionist-benchmarks, \(mode) run: \(repetitions) interleaved repetition(s), median (min–max); \(format(durationSeconds, digits: 0)) s"
        )
        out.append(
            "machine: \(machine.cpu), \(machine.cores) cores, Linux \(machine.kernel); load average \(machine.loadAverageAtStart) at start, \(machine.loadAverageAtEnd) at end"
        )
        out.append(
            "reference: uncontended Mutex increment \(calibration.mutexIncrementNanos.map(nanos) ?? "not measured: \(Unavailable.synchronization)"), clock read \(nanos(calibration.clockReadNanos))"
        )
        out.append("allocation counter: \(allocationCounter)")
        out.append("")
        out.append("\(HeapAllocations.legend).")
        out.append(
            "final value: in how many repetitions the consumer saw (or missed) the observed value's final value, "
                + "for the rows that check it (a miss fails the library's rows and the floors; Observations may miss it); "
                + "for Observations also how often it emitted the value it had just emitted (recorded, not failed)."
        )

        let throughput = rows.filter { $0.section == .throughput }
        if !throughput.isEmpty {
            out.append("")
            out.append("### Throughput (producers flat out; latency sampled every 64th change)")
            out.append("")
            out.append(
                "| row | P | changes | ns/change | changes/s | × faster than async | × floor | send ns/change | p50 | p99 | peak RSS Δ | allocs/change | hops | deliveries | final value |"
            )
            out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
            for row in throughput {
                let ns = row.nanosPerChange
                out.append(
                    "| \(row.name) | \(row.producers) | \(count(Double(row.changes))) | \(format(ns.median)) (\(format(ns.min))–\(format(ns.max))) | \(rate(row.changesPerSecond)) | "
                        + "\(row.speedupVsDispatchAsync.map { format($0) + "×" } ?? "—") | \(row.ratioToFloor.map { format($0, digits: 2) + "×" } ?? "—") | "
                        + "\(format(row.sendNanosPerChange.median)) | \(row.latencyP50Nanos.map(nanos) ?? "—") | \(row.latencyP99Nanos.map(nanos) ?? "—") | "
                        + "\(row.peakGrowthBytes.map { bytes($0.median) } ?? "—") | \(allocationsColumn(row)) | \(row.hops.map(count) ?? "—") | "
                        + "\(count(row.deliveries)) | \(row.finalValueSummary) |"
                )
            }
            let unordered = throughput.filter { $0.outOfOrder != nil }
            if !unordered.isEmpty {
                out.append("")
                out.append(
                    "out of order (recorded, not failed; each change still arrived exactly once): "
                        + unordered.map { "\($0.name) \($0.producers)P: \($0.outOfOrderSummary)" }.joined(
                            separator: "; "))
            }
        }
        let paced = rows.filter { $0.section == .paced }
        if !paced.isEmpty {
            out.append("")
            out.append("### Light load (each producer pauses ~100 µs after every change; every change timestamped)")
            out.append("")
            out.append(
                "| row | P | changes | p50 | p99 | p50 vs its per-change baseline | allocs/change | hops | deliveries |"
            )
            out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
            for row in paced {
                let baselineKey =
                    row.key == "receptionist-main" || row.key == "main-async" ? "main-async" : "dispatch-async"
                let baseline = paced.first { $0.key == baselineKey && $0.producers == row.producers }?.latencyP50Nanos
                let delta = zip2(row.latencyP50Nanos, baseline).map { signedNanos($0 - $1) } ?? "—"
                out.append(
                    "| \(row.name) | \(row.producers) | \(count(Double(row.changes))) | \(row.latencyP50Nanos.map(nanos) ?? "—") | \(row.latencyP99Nanos.map(nanos) ?? "—") | "
                        + "\(row.key == baselineKey ? "(baseline)" : delta) | \(allocationsColumn(row)) | \(row.hops.map(count) ?? "—") | \(count(row.deliveries)) |"
                )
            }
        }
        let flood = rows.filter { $0.section == .flood }
        if !flood.isEmpty {
            out.append("")
            out.append("### Flood with a slow consumer (1 producer flat out; the consumer spins 1 µs per change)")
            out.append("")
            out.append(
                "| row | changes | peak RSS Δ | total time | send ns/change | p50 | p99 | allocs/change | deliveries | waits |"
            )
            out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
            for row in flood {
                let memory =
                    row.peakGrowthBytes.map { "\(bytes($0.median)) (\(bytes($0.min))–\(bytes($0.max)))" } ?? "—"
                out.append(
                    "| \(row.name) | \(count(Double(row.changes))) | \(memory) | \(nanos(row.nanosPerChange.median * Double(row.changes))) | "
                        + "\(format(row.sendNanosPerChange.median)) | \(row.latencyP50Nanos.map(nanos) ?? "—") | \(row.latencyP99Nanos.map(nanos) ?? "—") | "
                        + "\(allocationsColumn(row)) | \(count(row.deliveries)) | \(row.waits.map { count($0.median) } ?? "—") |"
                )
            }
        }
        let backPressure = rows.filter { $0.section == .backPressure }
        if !backPressure.isEmpty {
            out.append("")
            out.append(
                "### Back-pressure behind stages (producers flat out; the consumer spins 1 µs per change)")
            out.append("")
            out.append("| row | producers | changes | peak RSS Δ | total time | send ns/change | waits | deliveries |")
            out.append("|---|--:|--:|--:|--:|--:|--:|--:|")
            for row in backPressure {
                let memory =
                    row.peakGrowthBytes.map { "\(bytes($0.median)) (\(bytes($0.min))–\(bytes($0.max)))" } ?? "—"
                out.append(
                    "| \(row.name) | \(row.producers) | \(count(Double(row.changes))) | \(memory) | "
                        + "\(nanos(row.nanosPerChange.median * Double(row.changes))) | \(format(row.sendNanosPerChange.median)) | "
                        + "\(row.waits.map { count($0.median) } ?? "—") | \(count(row.deliveries)) |"
                )
            }
        }
        out += contentionMarkdown(rows.filter { $0.section == .contention }, collapses: collapses)
        out += ingestMarkdown(rows.filter { $0.section == .ingest })
        out += flowControlMarkdown(rows.filter { $0.section == .flowControl && !isPausingProducerKey($0.key) })
        out += pausingProducerMarkdown(rows.filter { $0.section == .flowControl && isPausingProducerKey($0.key) })
        out += writersMarkdown(rows.filter { $0.section == .writers })
        if !skipped.isEmpty {
            out.append("")
            out.append("### Skipped on this platform (not failed)")
            out.append("")
            for row in skipped {
                out.append("- \(row.section.rawValue), \(row.name), \(row.producers)P: \(row.reason)")
            }
        }
        if !targets.isEmpty {
            out.append("")
            out.append("### Targets (issues 6, 12, 13 and 18; reported, never a reason to fail)")
            out.append("")
            if mode == "quick" {
                out.append(
                    "(quick mode: the counts are too small for these verdicts to mean anything; run without --quick)")
                out.append("")
            }
            for target in targets {
                let verdict = target.met.map { $0 ? "met" : "MISSED" } ?? "not run"
                out.append("- \(verdict): \(target.target): \(target.measured)")
            }
        }
        out.append("")
        if failures.isEmpty {
            out.append("correctness: every row checked counts, order, chain and final value: all passed")
        } else {
            out.append("correctness FAILED:")
            for failure in failures { out.append("  - \(failure)") }
        }
        return out.joined(separator: "\n")
    }
}

/// The median allocations per change, with the range when the repetitions disagree.
private func allocationsColumn(_ row: RowResult) -> String {
    guard let spread = row.allocationsPerChange else { return "—" }
    let median = allocationsPerChange(spread.median)
    let (low, high) = (allocationsPerChange(spread.min), allocationsPerChange(spread.max))
    return low == high ? median : "\(median) (\(low)–\(high))"
}

private func zip2<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
