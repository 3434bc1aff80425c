// main-queue-demo: background workers mutate a model; a receptionist bounces every change to the
// main thread, in order, and the demo proves it.
//
//     swift run main-queue-demo [--workers N] [--changes N] [--print-every N]

import Foundation
import Receptionist

/// The model the workers share.
final class Dashboard: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored property is an @Observed (a reference to a locked box).
    @Observed var completedJobs = 0
}

struct Options {
    var workers = 4
    var changesPerWorker = 2_500
    var printEvery = 1_000

    static let usage = """
        usage: main-queue-demo [--workers N] [--changes N] [--print-every N]

          --workers N       background threads mutating the model (default 4)
          --changes N       changes each worker makes (default 2500)
          --print-every N   print every Nth delivery (default 1000)
          --help            show this help
        """

    /// Parses `arguments`; prints usage and exits with status 2 on anything unexpected.
    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var remaining = arguments[...]
        func fail(_ message: String) -> Never {
            FileHandle.standardError.write(Data("main-queue-demo: \(message)\n\n\(usage)\n".utf8))
            exit(2)
        }
        func positive(_ flag: String) -> Int {
            guard let text = remaining.popFirst() else { fail("\(flag) needs a value") }
            guard let value = Int(text), value > 0 else { fail("\(flag) must be a positive integer, got '\(text)'") }
            return value
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--workers": options.workers = positive(flag)
            case "--changes": options.changesPerWorker = positive(flag)
            case "--print-every": options.printEvery = positive(flag)
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown option '\(flag)'")
            }
        }
        return options
    }
}

/// What the main-actor task block has seen.
@MainActor
final class Consumer {
    var deliveries = 0
    var chainBreaks = 0
    var offMainThread = 0
    var last: Int?
    var done = false
}

let options = Options.parse(Array(CommandLine.arguments.dropFirst()))
let total = options.workers * options.changesPerWorker
let dashboard = Dashboard()
let consumer = MainActor.assumeIsolated { Consumer() }

print("main-queue-demo: \(options.workers) workers × \(options.changesPerWorker) changes → main actor")

let token = dashboard.receptionist(for: \.completedJobs, options: [.initial, .old, .new])
    .deliver(on: .mainActor) { change in
        // Runs on the main actor, one change at a time, in the order the changes were applied.
        if !Thread.isMainThread { consumer.offMainThread += 1 }
        if let last = consumer.last, change.oldValue != last { consumer.chainBreaks += 1 }
        consumer.last = change.newValue
        if !change.isInitial { consumer.deliveries += 1 }
        if change.isInitial || consumer.deliveries % options.printEvery == 0 {
            let old = change.oldValue.map(String.init) ?? "—"
            print(
                "  delivery \(consumer.deliveries): \(old) → \(change.newValue!)"
                    + "  (main thread: \(Thread.isMainThread))"
            )
        }
        if consumer.deliveries == total { consumer.done = true }
    }

let start = Date()
for worker in 0..<options.workers {
    Thread {
        for _ in 0..<options.changesPerWorker {
            dashboard.$completedJobs.update { $0 += 1 }  // atomic read-modify-write
        }
        _ = worker
    }.start()
}

// Service the main queue on the real main thread until every change has been delivered.
// (dispatchMain() would drain the main queue on another thread on Linux.)
while !MainActor.assumeIsolated({ consumer.done }) {
    _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
}
let elapsed = Date().timeIntervalSince(start)

let stats = token.statistics
let (deliveries, breaks, offMain, last) = MainActor.assumeIsolated {
    (consumer.deliveries, consumer.chainBreaks, consumer.offMainThread, consumer.last)
}
let verified = deliveries == total && breaks == 0 && offMain == 0 && last == dashboard.completedJobs
print("summary: changes made \(total), delivered \(deliveries), final value \(last ?? -1)")
print("         chain breaks \(breaks), deliveries off the main thread \(offMain)")
print("         \(stats)")
print(String(format: "         %.0f ms, order and chain %@", elapsed * 1000, verified ? "verified" : "BROKEN"))
exit(verified ? 0 : 1)
