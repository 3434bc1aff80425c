// `--probe-invalid-configuration NAME` (hidden, for `.ci/check-release-messages`): builds one
// invalid configuration, or commits one misuse, in this release binary, which must stop the
// program with a message naming the parameter (or the misuse) on standard error. Reaching the
// end is a failure (exit status 3).

import Foundation
import Receptionist

enum ConfigurationProbe {
    /// The invalid configurations, by the name `.ci/check-release-messages` passes.
    static let cases: [String: @Sendable () -> Void] = [
        "batch-count-zero": { _ = Receptionist.pipeline(of: Int.self).batch(count: 0) },
        "batch-count-negative": { _ = Receptionist.pipeline(of: Int.self).batch(count: -3) },
        "batch-by-count-zero": { _ = Receptionist.pipeline(of: Int.self).batch(by: { $0 % 2 }, count: 0) },
        "batch-while-every-zero": {
            _ = Receptionist.pipeline(of: Int.self).batch(
                while: { $0 < $1 }, every: .zero, scheduler: ManualScheduler())
        },
        "throttle-interval-zero": {
            _ = Receptionist.pipeline(of: Int.self).throttle(for: .zero, scheduler: ManualScheduler(), latest: true)
        },
        "waiting-capacity-zero": { _ = BufferPolicy.waiting(capacity: 0) },
        "drop-oldest-capacity-negative": { _ = BufferPolicy.dropOldest(capacity: -1) },
        "watermarks-low-not-below-high": { _ = BufferPolicy.watermarks(low: 8, high: 8) },
        "weighing-without-watermarks": {
            _ = Receptionist<Int>(on: .immediate, buffering: .unbounded, weighing: value) { _ in }
        },
        "weighing-negative": {
            let receptionist = Receptionist<Int>(
                on: .immediate, buffering: .watermarks(low: 1, high: 2), weighing: negated
            ) { _ in }
            receptionist.send(3)
        },
        "weighing-time-based-stage": {
            _ = Receptionist.pipeline(of: Int.self)
                .debounce(for: .seconds(1), scheduler: ManualScheduler())
                .deliver(on: .immediate, buffering: .watermarks(low: 1, high: 2), weighing: value) { _ in }
        },
        "weighing-coalesce": {
            _ = Receptionist.pipeline(of: Int.self).coalesce()
                .deliver(on: .immediate, buffering: .watermarks(low: 1, high: 2), weighing: value) { _ in }
        },
        "manual-advance-negative": { ManualScheduler().advance(by: .seconds(-1)) },
        "main-thread-budget-zero": { MainThreadBudget.reportTaskBlocks(longerThan: .zero) { _ in } },
        // Misuse, through the public API.
        "transaction-after-update": {
            let model = ProbeModel()
            let escaped = model.update { $0 }
            escaped.count = 1
        },
        "transaction-direct-write": {
            let model = ProbeModel()
            model.update { transaction in
                _ = transaction.count
                model.count = 1
            }
        },
        "projection-update-direct-write": {
            let model = ProbeModel()
            model.$count.update { count in
                model.count = 1
                count += 1
            }
        },
        "target-runs-work-twice": {
            let receptionist = Receptionist.pipeline(of: Int.self).deliver(on: RunsTwiceTarget()) { _ in }
            receptionist.send(1)
        },
    ]

    /// Weighings for the `weighing-*` probes.
    private static let value: @Sendable (Int) -> Int = { $0 }
    private static let negated: @Sendable (Int) -> Int = { -$0 }

    /// Builds the configuration `name`; returns only by exiting.
    static func run(_ name: String) -> Never {
        guard let build = cases[name] else {
            let known = cases.keys.sorted().joined(separator: ", ")
            FileHandle.standardError.write(Data("receptionist-benchmarks: no probe '\(name)' (\(known))\n".utf8))
            exit(2)
        }
        build()
        FileHandle.standardError.write(Data("receptionist-benchmarks: probe '\(name)' was accepted\n".utf8))
        exit(3)
    }
}

/// The model of the transaction and `update` misuse probes.
private final class ProbeModel: ObservableModel, @unchecked Sendable {
    // @unchecked: the only stored property is an @Observed (a reference to a locked box).
    @Observed var count = 0
}

/// A target that breaks ``DeliveryTarget/submit(_:)``'s contract: it runs each work item twice.
private struct RunsTwiceTarget: DeliveryTarget {
    func submit(_ work: @escaping @Sendable () -> Void) {
        work()
        work()
    }
}
