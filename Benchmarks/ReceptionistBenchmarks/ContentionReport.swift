// The contention section's table (one line per row, one column per producer count) and its one
// timing check: no library row may collapse as producers outnumber cores.

/// The library rows of the contention section that collapsed: a row whose median cost per
/// change at 64 producers is more than ``collapseLimit`` times its cost at 1, or a receptionist
/// row (``asyncBoundedKeys``) whose cost at some P is more than ``asyncLimit`` times
/// `DispatchQueue.async` per change at that P.
func collapseViolations(_ rows: [RowResult]) -> [String] {
    let contention = rows.filter { $0.section == .contention }
    func median(_ key: String, _ producers: Int) -> Double? {
        contention.first { $0.key == key && $0.producers == producers }?.nanosPerChange.median
    }
    var violations: [String] = []
    for key in collapseCheckedKeys {
        guard let name = contention.first(where: { $0.key == key })?.name else { continue }
        let low = contentionProducers.first!
        let high = contentionProducers.last!
        if let one = median(key, low), let many = median(key, high), many > collapseLimit * one {
            violations.append(
                "\(name): \(nanos(many)) per change at \(high)P, \(format(many / one, digits: 1))× its "
                    + "\(nanos(one)) at \(low)P (limit \(format(collapseLimit, digits: 0))×)")
        }
        for producers in contentionProducers where asyncBoundedKeys.contains(key) {
            if let row = median(key, producers), let async = median("dispatch-async", producers),
                row > asyncLimit * async
            {
                violations.append(
                    "\(name): \(nanos(row)) per change at \(producers)P, "
                        + "more than \(format(asyncLimit, digits: 0))× DispatchQueue.async's \(nanos(async))")
            }
        }
    }
    return violations
}

/// The contention section as markdown: median ns per change for each producer count (the
/// range over repetitions below it), P64/P1, and context switches per change at 64 producers.
func contentionMarkdown(_ rows: [RowResult], collapses: [String]) -> [String] {
    guard !rows.isEmpty else { return [] }
    var out: [String] = []
    let producers = contentionProducers.filter { p in rows.contains { $0.producers == p } }
    out.append("")
    out.append("### Contention (producers flat out, more threads than cores; ns per change, median (min–max))")
    out.append("")
    let header = producers.map { "\($0)P" }.joined(separator: " | ")
    out.append("| row | \(header) | 64P / 1P | switches/change at 64P |")
    out.append("|---|" + producers.map { _ in "--:|" }.joined() + "--:|--:|")
    var seen = Set<String>()
    for row in rows where seen.insert(row.key).inserted {
        let line = rows.filter { $0.key == row.key }
        func cell(_ p: Int) -> String {
            guard let measured = line.first(where: { $0.producers == p })?.nanosPerChange else { return "—" }
            return "\(format(measured.median)) (\(format(measured.min))–\(format(measured.max)))"
        }
        let one = line.first { $0.producers == 1 }?.nanosPerChange.median
        let many = line.first { $0.producers == 64 }?.nanosPerChange.median
        let ratio = zipped(one, many).map { format($0.1 / $0.0, digits: 2) + "×" } ?? "—"
        let switches = line.first { $0.producers == 64 }?.contextSwitchesPerChange.map { format($0.median, digits: 3) }
        out.append(
            "| \(row.name) | " + producers.map(cell).joined(separator: " | ") + " | \(ratio) | \(switches ?? "—") |")
    }
    out.append("")
    if collapses.isEmpty {
        out.append(
            "collapse check: no library row costs more than \(format(collapseLimit, digits: 0))× its 1P cost at 64P, "
                + "and no receptionist row more than \(format(asyncLimit, digits: 0))× DispatchQueue.async per "
                + "change at any P")
    } else {
        out.append("collapse check FAILED:")
        for collapse in collapses { out.append("  - \(collapse)") }
    }
    return out
}

private func zipped<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}

/// The ingest section as markdown: per producer count, each row's time and context switches per
/// record, and the library's ratios to the hand-written floor (the targets: at most 1.5× its
/// time and 2× its context switches).
func ingestMarkdown(_ rows: [RowResult]) -> [String] {
    guard !rows.isEmpty else { return [] }
    var out: [String] = []
    out.append("")
    out.append(
        "### Ingest (a log pipeline: producers flat out, batches of 512 or 20 ms written to a file; median (min–max))")
    out.append("")
    out.append(
        "| row | P | records | ns/record | total | switches/record | waits | peak RSS Δ | × floor time | "
            + "× floor switches |")
    out.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for row in rows {
        let floor = rows.first { $0.key == "ingest-floor" && $0.producers == row.producers }
        let time = floor.map { format(row.nanosPerChange.median / $0.nanosPerChange.median, digits: 2) + "×" }
        let switches = zipped(row.contextSwitchesPerChange, floor?.contextSwitchesPerChange).map {
            format($0.0.median / max($0.1.median, 1e-9), digits: 2) + "×"
        }
        let ns = row.nanosPerChange
        out.append(
            "| \(row.name) | \(row.producers) | \(count(Double(row.changes))) | \(format(ns.median)) (\(format(ns.min))–\(format(ns.max))) | "
                + "\(nanos(ns.median * Double(row.changes))) | "
                + "\(row.contextSwitchesPerChange.map { format($0.median, digits: 4) } ?? "—") | "
                + "\(row.waits.map { count($0.median) } ?? "—") | \(row.peakGrowthBytes.map { bytes($0.median) } ?? "—") | "
                + "\(row.key == "ingest-floor" ? "(floor)" : time ?? "—") | \(row.key == "ingest-floor" ? "(floor)" : switches ?? "—") |"
        )
    }
    return out
}
