import Testing

@testable import Receptionist

/// Every stage, and some combinations, against its reference model (`StageModel.swift`): seeded
/// random sequences of sends from several producers, flushes, finishes, cancels, advances of a
/// `ManualScheduler` (0, an interval, and amounts that land on or straddle deadlines), runs of a
/// manual target and the release of an observed box. The outputs, the clock time each was
/// delivered at, and how and when the pipeline ended must be what the model says.
///
/// `RECEPTIONIST_STRESS_SCALE` scales the number of sequences (10 000 per case by default). A
/// mismatch is reported with its seed, the sequence, a shortened sequence that still fails, and
/// both timelines; a case stops after three.
///
/// The cases run one at a time, each on a thread of its own: they are CPU-bound for tens of
/// seconds, and on the cooperative pool (two threads on a 2-core machine) they would starve the
/// async tests and actor deliveries running meanwhile.
@Suite(.serialized) struct RandomizedStageTests {
    @Test(arguments: ModelCase.all)
    func stageMatchesItsModel(_ stage: ModelCase) async {
        let reports = await onOwnThread { Self.mismatches(of: stage, sequences: scaled(10_000)) }
        for report in reports { Issue.record(Comment(rawValue: report)) }
    }

    /// The first three sequences on which `stage` differs from its model, described.
    private static func mismatches(of stage: ModelCase, sequences: Int) -> [String] {
        var reports: [String] = []
        for index in 0..<sequences {
            let (seed, parameters, operations) = stage.sequence(index)
            guard let mismatch = stage.compare(operations, parameters) else { continue }
            let shortest = stage.shrink(operations, parameters, mismatch)
            reports.append(
                """
                \(stage.name) differs from its model: sequence \(index), seed \(seed) (\(parameters))
                operations: \(operations.map(\.description).joined(separator: " "))
                expected:   \(mismatch.expected)
                actual:     \(mismatch.actual)
                shortened:  \(shortest.operations.map(\.description).joined(separator: " "))
                expected:   \(shortest.mismatch.expected)
                actual:     \(shortest.mismatch.actual)
                """
            )
            if reports.count == 3 { break }
        }
        return reports
    }

    /// The generator is a pure function of the seed, so a reported sequence can be replayed.
    @Test func sequencesAreReproducible() {
        let stage = ModelCase.all[0]
        #expect(stage.sequence(7).operations == stage.sequence(7).operations)
        #expect(stage.sequence(7).operations != stage.sequence(8).operations)
    }
}

// MARK: - The cases

extension ModelCase {
    static let all: [ModelCase] =
        transforms + accumulators + batches + throttles + debounces + combinations + observations

    static let transforms: [ModelCase] = [
        .sent(
            "filter",
            model: { _ in TransformModel { isEven($0) ? $0 : nil } },
            stages: { pipeline, _, _ in pipeline.filter(isEven) }
        ),
        .sent(
            "map",
            model: { _ in TransformModel(transform: tag) },
            stages: { pipeline, _, _ in pipeline.map(tag) }
        ),
        .sent(
            "compactMap",
            model: { _ in TransformModel(transform: nonZeroTag) },
            stages: { pipeline, _, _ in pipeline.compactMap(nonZeroTag) }
        ),
    ]

    static let accumulators: [ModelCase] = [
        .sent(
            "scan",
            model: { _ in ScanModel(result: 0, next: digest) },
            stages: { pipeline, _, _ in pipeline.scan(0, digest) }
        ),
        .sent(
            "removeDuplicates()",
            input: \.value,
            model: { _ in RemoveDuplicatesModel<Int>(by: ==) },
            stages: { pipeline, _, _ in pipeline.removeDuplicates() }
        ),
        .sent(
            "removeDuplicates(by:)",
            model: { _ in RemoveDuplicatesModel(by: isClose) },
            stages: { pipeline, _, _ in pipeline.removeDuplicates(by: isClose) }
        ),
        .sent(
            "coalesce() on a manual target",
            delivery: .manual(fold: foldCoalesced, keepsModel: false),
            model: { _ in TransformModel { Coalesced(latest: $0, count: 1) } },
            stages: { pipeline, _, _ in pipeline.coalesce() }
        ),
    ]

    static let batches: [ModelCase] = [
        .sent(
            "batch(count:)",
            model: { p in BatchModel<Sample>(count: p.count, interval: nil) },
            stages: { pipeline, p, _ in pipeline.batch(count: p.count) }
        ),
        .sent(
            "batch(every:)",
            model: { p in BatchModel<Sample>(count: nil, interval: p.interval) },
            stages: { pipeline, p, clock in pipeline.batch(every: p.intervalDuration, scheduler: clock) }
        ),
        .sent(
            "batch(count:every:)",
            model: { p in BatchModel<Sample>(count: p.count, interval: p.interval) },
            stages: { pipeline, p, clock in
                pipeline.batch(count: p.count, every: p.intervalDuration, scheduler: clock)
            }
        ),
        .sent(
            "batch(while:)",
            model: { _ in ContentBatchModel(batching: BatchModel(count: nil, interval: nil), belongs: isClose) },
            stages: { pipeline, _, _ in pipeline.batch(while: isClose) }
        ),
        .sent(
            "batch(by:count:every:)",
            model: { p in
                ContentBatchModel(batching: BatchModel<Sample>(count: p.count, interval: p.interval)) {
                    parity($0) == parity($1)
                }
            },
            stages: { pipeline, p, clock in
                pipeline.batch(by: parity, count: p.count, every: p.intervalDuration, scheduler: clock)
            }
        ),
    ]

    static let throttles: [ModelCase] = [
        .sent(
            "throttle(for:latest: true)",
            model: { p in ThrottleModel<Sample>(interval: p.interval, leading: true, keep: .latest) },
            stages: { pipeline, p, clock in pipeline.throttle(for: p.intervalDuration, scheduler: clock, latest: true) }
        ),
        .sent(
            "throttle(for:latest: false)",
            model: { p in ThrottleModel<Sample>(interval: p.interval, leading: true, keep: .first) },
            stages: { pipeline, p, clock in pipeline.throttle(for: p.intervalDuration, scheduler: clock, latest: false)
            }
        ),
        .sent(
            "throttle(for:leading: true, trailing: true)",
            model: { p in ThrottleModel<Sample>(interval: p.interval, leading: true, keep: .latest) },
            stages: { pipeline, p, clock in
                pipeline.throttle(for: p.intervalDuration, scheduler: clock, leading: true, trailing: true)
            }
        ),
        .sent(
            "throttle(for:leading: true, trailing: false)",
            model: { p in ThrottleModel<Sample>(interval: p.interval, leading: true, keep: .none) },
            stages: { pipeline, p, clock in
                pipeline.throttle(for: p.intervalDuration, scheduler: clock, leading: true, trailing: false)
            }
        ),
        .sent(
            "throttle(for:leading: false, trailing: true)",
            model: { p in ThrottleModel<Sample>(interval: p.interval, leading: false, keep: .latest) },
            stages: { pipeline, p, clock in
                pipeline.throttle(for: p.intervalDuration, scheduler: clock, leading: false, trailing: true)
            }
        ),
    ]

    static let debounces: [ModelCase] = [
        .sent(
            "debounce(for:)",
            model: { p in DebounceModel<Sample>(interval: p.interval) },
            stages: { pipeline, p, clock in pipeline.debounce(for: p.intervalDuration, scheduler: clock) }
        ),
        .sent(
            "debounce(for:maxWait:)",
            model: { p in DebounceModel<Sample>(interval: p.interval, maxWait: p.maxWait) },
            stages: { pipeline, p, clock in
                pipeline.debounce(for: p.intervalDuration, maxWait: p.maxWaitDuration, scheduler: clock)
            }
        ),
    ]

    static let combinations: [ModelCase] = [
        .sent(
            "filter → batch(count:every:)",
            model: { p in
                TransformModel { isEven($0) ? $0 : nil }.then(BatchModel<Sample>(count: p.count, interval: p.interval))
            },
            stages: { pipeline, p, clock in
                pipeline.filter(isEven).batch(count: p.count, every: p.intervalDuration, scheduler: clock)
            }
        ),
        .sent(
            "map → throttle(for:latest: true)",
            model: { p in
                TransformModel(transform: tag).then(
                    ThrottleModel<Int>(interval: p.interval, leading: true, keep: .latest))
            },
            stages: { pipeline, p, clock in
                pipeline.map(tag).throttle(for: p.intervalDuration, scheduler: clock, latest: true)
            }
        ),
        .sent(
            "map → removeDuplicates() → debounce(for:)",
            model: { p in
                TransformModel<Sample, Int> { $0.value }.then(RemoveDuplicatesModel<Int>(by: ==))
                    .then(DebounceModel<Int>(interval: p.interval))
            },
            stages: { pipeline, p, clock in
                pipeline.map(\.value).removeDuplicates().debounce(for: p.intervalDuration, scheduler: clock)
            }
        ),
        .sent(
            "scan → batch(every:)",
            model: { p in ScanModel(result: 0, next: digest).then(BatchModel<Int>(count: nil, interval: p.interval)) },
            stages: { pipeline, p, clock in pipeline.scan(0, digest).batch(every: p.intervalDuration, scheduler: clock)
            }
        ),
        .sent(
            "compactMap → debounce(for:maxWait:)",
            model: { p in
                TransformModel(transform: nonZeroTag).then(DebounceModel<Int>(interval: p.interval, maxWait: p.maxWait))
            },
            stages: { pipeline, p, clock in
                pipeline.compactMap(nonZeroTag).debounce(
                    for: p.intervalDuration, maxWait: p.maxWaitDuration, scheduler: clock)
            }
        ),
        .sent(
            "removeDuplicates(by:) → throttle(for:leading: false, trailing: true)",
            model: { p in
                RemoveDuplicatesModel(by: isClose)
                    .then(ThrottleModel<Sample>(interval: p.interval, leading: false, keep: .latest))
            },
            stages: { pipeline, p, clock in
                pipeline.removeDuplicates(by: isClose).throttle(
                    for: p.intervalDuration, scheduler: clock, leading: false, trailing: true)
            }
        ),
        .sent(
            "debounce(for:) → scan",
            model: { p in DebounceModel<Sample>(interval: p.interval).then(ScanModel(result: 0, next: digest)) },
            stages: { pipeline, p, clock in pipeline.debounce(for: p.intervalDuration, scheduler: clock).scan(0, digest)
            }
        ),
        .sent(
            "throttle(for:latest: false) → coalesce() on a manual target",
            delivery: .manual(fold: foldCoalesced, keepsModel: false),
            model: { p in
                ThrottleModel<Sample>(interval: p.interval, leading: true, keep: .first)
                    .then(TransformModel { Coalesced(latest: $0, count: 1) })
            },
            stages: { pipeline, p, clock in
                pipeline.throttle(for: p.intervalDuration, scheduler: clock, latest: false).coalesce()
            }
        ),
        .sent(
            "batch(count:every:) → map on a manual target",
            delivery: .manual(fold: nil, keepsModel: false),
            model: { p in
                BatchModel<Sample>(count: p.count, interval: p.interval).then(TransformModel { $0.map(tag) })
            },
            stages: { pipeline, p, clock in
                pipeline.batch(count: p.count, every: p.intervalDuration, scheduler: clock).map { $0.map(tag) }
            }
        ),
    ]

    /// Observations of a box: writes instead of sends, and the box may be let go of.
    static let observations: [ModelCase] = [
        .observed(
            "observed removeDuplicates()",
            stagesKeepModel: false,
            model: { _ in RemoveDuplicateChangesModel() },
            convert: changeModel,
            stages: { changes, _, _ in changes.removeDuplicates() }
        ),
        .observed(
            "observed map(\\.newValue) → batch(count:every:)",
            stagesKeepModel: false,
            model: { p in
                TransformModel<ChangeModel, Int> { $0.new }.then(BatchModel<Int>(count: p.count, interval: p.interval))
            },
            convert: { (batch: [Int]) in batch },
            stages: { changes, p, clock in
                changes.map(\.newValue).batch(count: p.count, every: p.intervalDuration, scheduler: clock)
            }
        ),
        .observed(
            "observed throttle(for:latest: true)",
            stagesKeepModel: true,
            model: { p in ThrottleModel<ChangeModel>(interval: p.interval, leading: true, keep: .latest) },
            convert: changeModel,
            stages: { changes, p, clock in changes.throttle(for: p.intervalDuration, scheduler: clock, latest: true) }
        ),
        .observed(
            "observed debounce(for:maxWait:)",
            stagesKeepModel: true,
            model: { p in DebounceModel<ChangeModel>(interval: p.interval, maxWait: p.maxWait) },
            convert: changeModel,
            stages: { changes, p, clock in
                changes.debounce(for: p.intervalDuration, maxWait: p.maxWaitDuration, scheduler: clock)
            }
        ),
        .observed(
            "observed batch(count:)",
            stagesKeepModel: true,
            model: { p in BatchModel<ChangeModel>(count: p.count, interval: nil) },
            convert: { (batch: [BoxChange]) in batch.map(changeModel) },
            stages: { changes, p, _ in changes.batch(count: p.count) }
        ),
        .observed(
            "observed coalesce() on a manual target",
            stagesKeepModel: false,
            delivery: .manual(fold: foldChange, keepsModel: true),
            model: { _ in TransformModel<ChangeModel, ChangeModel> { $0 } },
            convert: changeModel,
            stages: { changes, _, _ in changes.coalesce() }
        ),
    ]

    // MARK: Stage closures, shared by the pipelines and their models

    @Sendable static func isEven(_ sample: Sample) -> Bool { sample.value % 2 == 0 }

    /// A key for `batch(by:)`: runs of even and of odd values.
    @Sendable static func parity(_ sample: Sample) -> Int { sample.value % 2 }

    /// A number that tells which sample it came from.
    @Sendable static func tag(_ sample: Sample) -> Int {
        sample.producer * 10_000 + sample.sequence * 10 + sample.value
    }

    @Sendable static func nonZeroTag(_ sample: Sample) -> Int? { sample.value == 0 ? nil : tag(sample) }

    /// An order-sensitive running digest.
    @Sendable static func digest(_ result: Int, _ sample: Sample) -> Int { (result * 31 + tag(sample) + 1) % 1_000_003 }

    /// Not an equivalence (1 is close to 0 and 2, which are not close), so that comparing with
    /// the last element passed on, not the last received, matters.
    @Sendable static func isClose(_ previous: Sample, _ current: Sample) -> Bool {
        abs(previous.value - current.value) <= 1
    }

    /// `coalesce()`: the latest output, standing for the outputs of both.
    @Sendable static func foldCoalesced(_ waiting: inout Coalesced<Sample>, _ new: Coalesced<Sample>) {
        waiting = Coalesced(latest: new.latest, count: waiting.count + new.count)
    }

    /// `coalesce()` of changes: the old value of the first, the new value of the last.
    @Sendable static func foldChange(_ waiting: inout ChangeModel, _ new: ChangeModel) {
        waiting.new = new.new
        waiting.count += new.count
    }
}
