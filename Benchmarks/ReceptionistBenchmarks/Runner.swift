// Command-line options and the run: warm-up, interleaved repetitions, report, exit status.

import Foundation
import Synchronization

struct Options: Sendable {
    var quick = false
    var json = false
    var jsonFile: String?
    var repetitions: Int?
    var changes: Int?
    var filter: String?
    var sections = Set(Section.allCases)
    var producers: Int?
    var warmUp = true
    var injectFault = false
    /// Exit with status 1 if a contention row collapses (see ``collapseLimit``).
    var failOnCollapse = false
    var inProcess = false
    /// `--scale`: the growth rows of ``Scale`` instead of the sections.
    var scale = false
    /// Count Swift heap allocations (allocs/change); off for profilers that want the plain runtime.
    var countAllocations = true
    /// Internal: run this one row once in this process and print its measurement as JSON.
    var childRow: String?

    static let usage = """
        usage: receptionist-benchmarks [--quick] [--json] [--json-file PATH] [--repetitions N]
                                       [--changes N] [--filter TEXT] [--sections LIST]
                                       [--producers N] [--in-process] [--no-warm-up]
                                       [--inject-fault] [--no-allocation-counter]
                                       [--fail-on-collapse]

        Measures the receptionist against per-change DispatchQueue.async, OperationQueue,
        AsyncStream, a Task per change onto an actor, NotificationCenter and hand-written
        floors, in one run, and checks every row for correctness (counts, order, chain, final
        value). Exits 1 if a check fails, never because of a timing. Run it in release:
        swift run -c release receptionist-benchmarks

          --quick           CI smoke: small counts, 1 repetition (a few seconds)
          --json            print the report as JSON on stdout (progress still goes to stderr)
          --json-file PATH  also write the JSON report to PATH (the tables still go to stdout)
          --repetitions N   interleaved repetitions (default 5; 1 with --quick)
          --changes N       changes per throughput row (default 1000000; 20000 with --quick);
                            the other sections scale with it
          --filter TEXT     only the rows whose name or key contains TEXT (case-insensitive);
                            a row's exact key selects that row alone
          --sections LIST   comma-separated: throughput, paced, flood, back-pressure, contention,
                            ingest, flow-control, writers (default all)
          --producers N     only the rows with N producer threads (1 or 2; 8 in back-pressure;
                            1, 2, 4, 8, 16, 64 in contention; 1, 2, 16, 64 in ingest)
          --fail-on-collapse
                            exit 1 if a library row of the contention section costs more per
                            change at 64 producers than 3× its cost at 1, or more than 2×
                            DispatchQueue.async per change at the same P (the one timing check;
                            CI runs it with --quick --sections contention)
          --no-warm-up      skip the unrecorded warm-up pass (with --in-process)
          --scale           instead of the sections: how cost per observation, per observer and
                            per operation grows with their number (fan-out, observer sets, hub,
                            hub subscribers with stages), what transactions and idle
                            observations cost, in this process; --quick and --repetitions apply,
                            --filter picks groups (fan-out, observer-set, hub, hub-pipelines,
                            transactions, memory)
          --in-process      run every row in this process (for profilers) instead of one
                            child process per row and repetition (the default, so that each
                            row starts from a clean heap and its peak RSS is its own)
          --inject-fault    self-test: swap two changes of every row (duplicate one in the
                            unordered Task-per-change row), so that the checks must fail
                            and the exit status must be 1
          --no-allocation-counter
                            do not hook swift_allocObject (allocs/change shows —)
          --help            show this help
        """

    /// Parses `arguments`; prints usage and exits with status 2 on anything unexpected.
    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var remaining = arguments[...]
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("receptionist-benchmarks: \(message)\n\n\(usage)\n".utf8))
            exit(2)
        }
        func value(_ flag: String) -> String {
            guard let text = remaining.popFirst() else { fail("\(flag) needs a value") }
            return text
        }
        func positive(_ flag: String) -> Int {
            let text = value(flag)
            guard let number = Int(text), number > 0 else { fail("\(flag) must be a positive integer, got '\(text)'") }
            return number
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--quick": options.quick = true
            case "--json": options.json = true
            case "--json-file": options.jsonFile = value(flag)
            case "--repetitions": options.repetitions = positive(flag)
            case "--changes":
                let changes = positive(flag)
                guard changes >= 1_000 else { fail("--changes must be at least 1000, got \(changes)") }
                options.changes = changes
            case "--filter": options.filter = value(flag).lowercased()
            case "--sections":
                let text = value(flag)
                var sections = Set<Section>()
                for name in text.split(separator: ",") {
                    guard let section = Section(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                        fail(
                            "unknown section '\(name)' (\(Section.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    sections.insert(section)
                }
                guard !sections.isEmpty else { fail("--sections needs at least one section") }
                options.sections = sections
            case "--producers":
                let producers = positive(flag)
                guard [1, 2, 4, 8, 16, 64].contains(producers) else {
                    fail("--producers must be 1, 2, 4, 8, 16 or 64, got \(producers)")
                }
                options.producers = producers
            case "--no-warm-up": options.warmUp = false
            case "--inject-fault": options.injectFault = true
            case "--fail-on-collapse": options.failOnCollapse = true
            case "--in-process": options.inProcess = true
            case "--scale": options.scale = true
            case "--no-allocation-counter": options.countAllocations = false
            case "--child-row": options.childRow = value(flag)
            // Hidden (.ci/check-release-messages): stops on an invalid configuration.
            case "--probe-invalid-configuration": ConfigurationProbe.run(value(flag))
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown option '\(flag)'")
            }
        }
        return options
    }

    var sizes: Sizes {
        var sizes = quick ? Sizes.quick : Sizes.full
        if let changes {
            let scale = Double(changes) / Double(sizes.throughput)
            sizes.throughput = changes
            sizes.notification = max(100, Int(Double(sizes.notification) * scale))
            sizes.paced = max(100, Int(Double(sizes.paced) * scale))
            sizes.flood = max(1_000, Int(Double(sizes.flood) * scale))
            sizes.contention = max(1_000, Int(Double(sizes.contention) * scale))
            sizes.ingest = max(1_000, Int(Double(sizes.ingest) * scale))
        }
        return sizes
    }
}

enum Benchmark {
    /// Runs everything the options select; returns the exit status.
    static func run(_ options: Options) -> Int32 {
        let started = now()
        let loadAtStart = loadAverage()
        let repetitions = options.repetitions ?? (options.quick ? 1 : 5)
        let all = allScenarios(options.sizes, injectFault: options.injectFault)
        // A filter that is exactly a row's key selects that row alone (profiling one row).
        let exactKey = options.filter.flatMap { filter in all.contains { $0.key == filter } ? filter : nil }
        let scenarios = all.filter { scenario in
            options.sections.contains(scenario.section)
                && (options.producers.map { $0 == scenario.spec.producers } ?? true)
                && (exactKey.map { scenario.key == $0 }
                    ?? options.filter.map { scenario.name.lowercased().contains($0) || scenario.key.contains($0) }
                    ?? true)
        }
        guard !scenarios.isEmpty else {
            FileHandle.standardError.write(Data("receptionist-benchmarks: no row matches the filter\n".utf8))
            return 2
        }
        progress("load average \(loadAtStart); \(scenarios.count) rows × \(repetitions) repetition(s)")
        let calibration = calibrate()

        var failures: [String] = []
        func record(_ scenario: Scenario, _ measurement: Measurement, pass: String) {
            for failure in measurement.failures {
                failures.append(
                    "\(scenario.section.rawValue), \(scenario.name), \(scenario.spec.producers)P (\(pass)): \(failure)")
            }
        }

        if options.inProcess && options.warmUp && !options.quick {
            progress("warm-up (not recorded)")
            var small = Sizes.quick
            small.pace = options.sizes.pace
            for scenario in allScenarios(small, injectFault: options.injectFault)
            where scenarios.contains(where: { $0.id == scenario.id }) {
                record(scenario, scenario.run(scenario.spec), pass: "warm-up")
            }
        }

        var runs: [String: [Measurement]] = [:]
        /// Rows this platform cannot run (an API newer than the deployment floor), by id: the reason.
        var skipped: [String: String] = [:]
        for repetition in 0..<repetitions {
            // Interleaved, alternating direction, so that drift in the machine's load spreads evenly.
            let order = repetition % 2 == 0 ? scenarios : scenarios.reversed()
            for scenario in order where skipped[scenario.id] == nil {
                let measurement = options.inProcess ? scenario.run(scenario.spec) : runIsolated(scenario, options)
                if let reason = measurement.skipped {
                    skipped[scenario.id] = reason
                    progress(
                        "[\(repetition + 1)/\(repetitions)] \(scenario.section.rawValue) \(scenario.name) \(scenario.spec.producers)P: "
                            + "skipped: \(reason)")
                    continue
                }
                runs[scenario.id, default: []].append(measurement)
                record(scenario, measurement, pass: "repetition \(repetition + 1)")
                progress(
                    "[\(repetition + 1)/\(repetitions)] \(scenario.section.rawValue) \(scenario.name) \(scenario.spec.producers)P: "
                        + "\(format(measurement.nanosPerChange)) ns/change, peak RSS +\(measurement.peakGrowthBytes.map { bytes(Double($0)) } ?? "?")"
                        + ", allocs/change \(measurement.allocationsPerChange.map(allocationsPerChange) ?? "?")"
                        + (measurement.finalValueMissed == true ? ", final value missed" : "")
                        + (measurement.repeatedValues.map { $0 > 0 ? ", \($0) repeated values" : "" } ?? "")
                        + (measurement.outOfOrder.map { ", \($0) out of order" } ?? "")
                        + (measurement.waits.map { ", \($0) waits" } ?? "")
                        + (measurement.failures.isEmpty
                            ? "" : "  FAILED: \(measurement.failures.joined(separator: "; "))"))
            }
        }

        var rows = scenarios.filter { skipped[$0.id] == nil }.map { RowResult($0, runs[$0.id]!) }
        addRatios(&rows)
        let report = Report(
            mode: options.quick ? "quick" : "full",
            command: (["receptionist-benchmarks"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
            repetitions: repetitions,
            machine: Machine.describe(loadAtStart: loadAtStart),
            calibration: calibration,
            allocationCounter: HeapAllocations.status.description,
            rows: rows,
            skipped: scenarios.compactMap { scenario in skipped[scenario.id].map { SkippedRow(scenario, reason: $0) } },
            targets: evaluateTargets(rows),
            collapses: collapseViolations(rows),
            failures: failures,
            durationSeconds: Double(now() - started) / 1e9
        )
        print(options.json ? report.json() : report.markdown())
        if let path = options.jsonFile {
            do {
                try Data(report.json().utf8).write(to: URL(fileURLWithPath: path))
            } catch {
                FileHandle.standardError.write(Data("receptionist-benchmarks: cannot write \(path): \(error)\n".utf8))
                return 2
            }
        }
        if options.failOnCollapse && !report.collapses.isEmpty {
            FileHandle.standardError.write(
                Data(
                    ("receptionist-benchmarks: \(report.collapses.count) contention row(s) COLLAPSED:\n"
                        + report.collapses.map { "  - \($0)\n" }.joined()).utf8))
            if failures.isEmpty { return 1 }
        }
        if !failures.isEmpty {
            FileHandle.standardError.write(
                Data(
                    ("receptionist-benchmarks: \(failures.count) correctness check(s) FAILED:\n"
                        + failures.map { "  - \($0)\n" }.joined()).utf8))
            return 1
        }
        return 0
    }

    /// Runs `scenario` once in a child process of this executable (`--child-row`), so that it
    /// starts from a fresh heap: glibc keeps memory freed in a thread's arena resident (and
    /// `malloc_trim` does not give back the top of a thread arena), which would let a row reuse
    /// pages an earlier row touched and hide its own growth.
    static func runIsolated(_ scenario: Scenario, _ options: Options) -> Measurement {
        let process = Process()
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        process.executableURL = URL(fileURLWithPath: executable)
        var arguments = ["--child-row", scenario.id]
        if options.quick { arguments.append("--quick") }
        if let changes = options.changes { arguments += ["--changes", String(changes)] }
        if options.injectFault { arguments.append("--inject-fault") }
        if !options.countAllocations { arguments.append("--no-allocation-counter") }
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        var failure: String
        do {
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            if process.terminationStatus == 0, let measurement = try? JSONDecoder().decode(Measurement.self, from: data)
            {
                return measurement
            }
            failure =
                "the child process for this row exited with status \(process.terminationStatus) without a measurement"
        } catch {
            failure = "cannot start the child process for this row: \(error)"
        }
        return Measurement(
            changes: scenario.spec.changes, elapsedNanos: 1, sendNanos: 1, latencies: [], peakGrowthBytes: nil,
            hops: nil, deliveries: 0, failures: [failure])
    }

    /// The child side of ``runIsolated(_:_:)``: a short warm-up of the row (its checks count),
    /// then the measured run, printed as JSON.
    static func runChild(_ options: Options, row id: String) -> Int32 {
        guard let scenario = allScenarios(options.sizes, injectFault: options.injectFault).first(where: { $0.id == id })
        else {
            FileHandle.standardError.write(Data("receptionist-benchmarks: no row \(id)\n".utf8))
            return 2
        }
        var warmUp = scenario.spec
        warmUp.changes = scenario.section == .paced ? min(warmUp.changes, 20) : min(warmUp.changes, 2_000)
        let warmUpFailures = scenario.run(warmUp).failures.map { "warm-up: \($0)" }
        var measurement = scenario.run(scenario.spec)
        measurement.failures = warmUpFailures + measurement.failures
        let encoder = JSONEncoder()
        print(String(decoding: try! encoder.encode(measurement), as: UTF8.self))
        return 0
    }

    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// The reference costs the report prints, measured here: an uncontended `Mutex` increment
    /// (where `Synchronization` is available) and a clock read.
    static func calibrate() -> Calibration {
        let iterations = 2_000_000
        var mutexNanos: Double?
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            mutexNanos = mutexIncrementNanos(iterations: iterations)
        }
        var sink: UInt64 = 0
        let start = now()
        for _ in 0..<iterations { sink &+= now() }
        let clockNanos = Double(now() - start) / Double(iterations)
        precondition(sink != 0)
        return Calibration(mutexIncrementNanos: mutexNanos, clockReadNanos: clockNanos)
    }

    /// The cost of one uncontended `Mutex` increment, in nanoseconds.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    static func mutexIncrementNanos(iterations: Int) -> Double {
        let mutex = Mutex(0)
        let start = now()
        for _ in 0..<iterations { mutex.withLock { $0 &+= 1 } }
        let nanos = Double(now() - start) / Double(iterations)
        precondition(mutex.withLock { $0 } == iterations)
        return nanos
    }
}
