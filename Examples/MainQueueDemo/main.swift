// main-queue-demo: background workers mutate a model; a receptionist bounces every change to the
// main thread, in order, and the demo proves it.
//
//     swift run main-queue-demo [--workers N] [--changes N] [--print-every N]

import DemoSupport
import Foundation
import Receptionist

/// The model the workers share.
final class Dashboard: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored property is an @Observed (a reference to a locked box).
    @Observed var completedJobs = 0
}

struct Options {
    var workers: Int
    var changesPerWorker: Int
    var printEvery: Int

    /// Parses the program's arguments; on `--help` prints the usage and exits with status 0, on
    /// anything unexpected prints an error and the usage to standard error and exits with status 2.
    static func parse() -> Options {
        var options = CommandLineOptions(
            command: "main-queue-demo",
            abstract: """
                Background workers mutate a model; a receptionist bounces every change to the main
                thread, in order, and the demo verifies order, the old/new chain and the thread.
                """
        )
        let workers = options.positiveInteger("--workers", default: 4, help: "background threads mutating the model")
        let changes = options.positiveInteger("--changes", default: 2_500, help: "changes each worker makes")
        let printEvery = options.positiveInteger("--print-every", default: 1_000, help: "print every Nth delivery")
        let parsed = options.parse()
        // Limits that keep the demo's threads and the total count sane.
        if parsed[workers] > 256 { options.fail("--workers must be at most 256, got \(parsed[workers])") }
        if parsed[changes] > 10_000_000 { options.fail("--changes must be at most 10000000, got \(parsed[changes])") }
        return Options(workers: parsed[workers], changesPerWorker: parsed[changes], printEvery: parsed[printEvery])
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

let options = Options.parse()
let total = options.workers * options.changesPerWorker
let dashboard = Dashboard()
let consumer = MainActor.assumeIsolated { Consumer() }

print("main-queue-demo: \(options.workers) workers × \(options.changesPerWorker) changes → main actor")

let token = dashboard.receptionist(for: \.completedJobs, options: [.initial, .old])
    .deliver(on: .mainActor) { change in
        // Runs on the main actor, one change at a time, in the order the changes were applied.
        if !Thread.isMainThread { consumer.offMainThread += 1 }
        if let last = consumer.last, change.oldValue != last { consumer.chainBreaks += 1 }
        consumer.last = change.newValue
        if !change.isInitial { consumer.deliveries += 1 }
        if change.isInitial || consumer.deliveries % options.printEvery == 0 {
            let old = change.oldValue.map(String.init) ?? "—"
            print(
                "  delivery \(consumer.deliveries): \(old) → \(change.newValue)"
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
