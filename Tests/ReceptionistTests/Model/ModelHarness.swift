import Testing

@testable import Receptionist

// MARK: - Playing operations against real pipelines

/// A running pipeline on a `ManualScheduler`, as the operations drive it: a receptionist, or an
/// observation of an `ObservableValue<Int>` that starts at 0.
struct PipelineSubject {
    let send: (Sample) -> Void
    let flush: () -> Void
    let finish: () -> Void
    let cancel: () -> Void
    let runTarget: () -> Void
    let releaseSource: () -> Void
    let isFinished: () -> Bool
    let isCancelled: () -> Bool
    let statistics: () -> ReceptionistStatistics
    /// Whether the pipeline can end while the clock advances (an observed box going when a
    /// stage hands its last change on): advances then stop at each deadline on the way, so that
    /// the end is seen at its time.
    let endsWhileAdvancing: Bool
}

/// The test's only reference to an observed box, so that `releaseSource` can deallocate it.
final class BoxHolder: Sendable {
    private let box: Locked<ObservableValue<Int>?>

    init(_ box: ObservableValue<Int>) {
        self.box = Locked(uncounted: box)
    }

    func write(_ value: Int) {
        let box = box.withLock { $0 }
        box?.value = value
    }

    func release() {
        let box = box.withLock { $0.take() }
        _ = box  // released here, outside the lock: its deinit finishes the observation.
    }
}

/// A `ManualScheduler` whose timers fire `lateness` after their deadline, as a busy queue's
/// would: elements that arrive at or after a deadline, before its timer, take the stages' "late
/// timer" paths.
struct LateScheduler: DeliveryScheduler, StageTimerPolicy {
    let base: ManualScheduler
    let lateness: Duration

    var rearmsStageTimersLazily: Bool { base.rearmsStageTimersLazily }

    var now: SchedulerInstant { base.now }

    func submit(_ work: @escaping @Sendable () -> Void) {
        base.submit(work)
    }

    @discardableResult
    func submit(at deadline: SchedulerInstant, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        base.submit(at: deadline + lateness, work)
    }
}

/// The delivery time of an output, in whole milliseconds of the manual clock.
func milliseconds(_ instant: SchedulerInstant) -> Int {
    Int((instant.offset / .milliseconds(1)).rounded())
}

/// Plays `operations` against the pipeline `build` makes on a new `ManualScheduler` (on which the
/// stages re-arm their timers lazily if `parameters` say so, as on a `QueueScheduler`), and records
/// what its task block is given, at which time, and when the pipeline ended (read after each
/// operation, and after each deadline an advance reaches if the subject can end meanwhile).
func recordedTimeline<Output: Sendable>(
    of operations: [ModelOperation],
    _ parameters: StageParameters,
    build: (ManualScheduler, _ record: @escaping @Sendable (Output) -> Void) -> PipelineSubject
) -> [TimelineEntry<Output>] {
    let clock = ManualScheduler(rearmingStageTimersLazily: parameters.timersRearmLazily)
    let recorder = Recorder<TimelineEntry<Output>>()
    let subject = build(clock) { output in recorder.append(.output(output, at: milliseconds(clock.now))) }
    var hasEnded = false
    func noteEnd() {
        guard !hasEnded else { return }
        if subject.isFinished() {
            recorder.append(.finished(at: milliseconds(clock.now)))
            hasEnded = true
        } else if subject.isCancelled() {
            recorder.append(.cancelled(at: milliseconds(clock.now)))
            hasEnded = true
        }
    }
    for operation in operations {
        switch operation {
        case .send(let sample):
            subject.send(sample)
            continue  // a send cannot end the pipeline
        case .advance(let amount):
            if subject.endsWhileAdvancing {
                let target = clock.now + .milliseconds(amount)
                while let next = clock.nextDeadline, next <= target {
                    clock.advance(to: next)
                    noteEnd()
                }
                clock.advance(to: target)
            } else {
                clock.advance(by: .milliseconds(amount))
            }
        case .flush: subject.flush()
        case .finish: subject.finish()
        case .cancel: subject.cancel()
        case .runTarget: subject.runTarget()
        case .releaseSource: subject.releaseSource()
        }
        noteEnd()
    }
    return recorder.values + [.statistics(DeliveryCounts(subject.statistics()))]
}

// MARK: - Cases

/// One stage, or a combination, with its reference model: a test case of
/// `RandomizedStageTests`.
struct ModelCase: Sendable, CustomTestStringConvertible {
    /// The expected and the recorded timeline of a sequence on which they differ.
    struct Mismatch {
        let expected: String
        let actual: String
    }

    let name: String
    let generator: OperationGenerator
    /// Plays the operations against the real pipeline and the model: `nil` if the timelines
    /// agree.
    let compare: @Sendable (_ operations: [ModelOperation], _ parameters: StageParameters) -> Mismatch?

    var testDescription: String { name }

    /// The operations and parameters of sequence `sequence`, from its seed.
    func sequence(_ sequence: Int) -> (seed: UInt64, parameters: StageParameters, operations: [ModelOperation]) {
        let seed = modelSeed(for: name, sequence: sequence)
        var random = SplitMix64(seed: seed)
        var parameters = generator.parameters(using: &random)
        // Every other sequence with the stages' timers moved lazily, as on a `QueueScheduler`:
        // the same outputs at the same times either way.
        parameters.timersRearmLazily = sequence % 2 == 1
        return (seed, parameters, generator.operations(for: parameters, using: &random))
    }

    /// A shorter list of operations that still fails, made by removing operations one at a time
    /// for as long as the mismatch remains.
    func shrink(
        _ operations: [ModelOperation],
        _ parameters: StageParameters,
        _ mismatch: Mismatch
    ) -> (operations: [ModelOperation], mismatch: Mismatch) {
        var shortest = (operations: operations, mismatch: mismatch)
        var removedOne = true
        while removedOne {
            removedOne = false
            var index = 0
            while index < shortest.operations.count {
                var candidate = shortest.operations
                candidate.remove(at: index)
                if let mismatch = compare(candidate, parameters) {
                    shortest = (candidate, mismatch)
                    removedOne = true
                } else {
                    index += 1
                }
            }
        }
        return shortest
    }
}

extension ModelCase {
    /// The stages of a receptionist fed `Input`, up to `Output`.
    typealias Sent<Input: Sendable, Output: Sendable> = Pipeline<ReceptionistInput<Input>, Output>
    /// The stages of an observation of an `ObservableValue<Int>`, up to `Output`.
    typealias Observing<Output: Sendable> = Pipeline<ObservedProperty<ObservableValue<Int>, Int>, Output>
    /// A change of an observed `ObservableValue<Int>`.
    typealias BoxChange = ObservedChange<ObservableValue<Int>, Int>

    /// A receptionist fed samples converted by `input`, through `stages`, checked against `model`.
    ///
    /// - Parameter delivery: `.immediate`, or a `ManualTarget` (with `fold` for `coalesce()`).
    static func sent<Input: Sendable, Output: Equatable & Sendable, Stage: StageModel>(
        _ name: String,
        input: @escaping @Sendable (Sample) -> Input,
        delivery: ModelDelivery<Output> = .immediate,
        model: @escaping @Sendable (StageParameters) -> Stage,
        stages: @escaping @Sendable (Sent<Input, Input>, StageParameters, LateScheduler) -> Sent<Input, Output>
    ) -> ModelCase where Stage.Input == Input, Stage.Output == Output {
        let generator = OperationGenerator(runsTarget: delivery.isManual)
        return ModelCase(name: name, generator: generator) { operations, parameters in
            let expected = ModelRun.timeline(
                of: operations, stage: model(parameters), source: .sent(input), delivery: delivery,
                lateness: parameters.lateness)
            let actual = recordedTimeline(of: operations, parameters) { clock, record in
                let scheduler = LateScheduler(base: clock, lateness: .milliseconds(parameters.lateness))
                let pipeline = stages(Receptionist.pipeline(of: Input.self), parameters, scheduler)
                let target = delivery.isManual ? ManualTarget() : nil
                let receptionist =
                    if let target { pipeline.deliver(on: target, record) } else {
                        pipeline.deliver(on: .immediate, record)
                    }
                return PipelineSubject(
                    send: { receptionist.send(input($0)) },
                    flush: { receptionist.flush() },
                    finish: { receptionist.finish() },
                    cancel: { receptionist.cancel() },
                    runTarget: { target?.runAll() },
                    releaseSource: {},
                    isFinished: { receptionist.isFinished },
                    isCancelled: { receptionist.isCancelled },
                    statistics: { receptionist.statistics },
                    endsWhileAdvancing: false
                )
            }
            return Mismatch(expected, actual)
        }
    }

    /// A receptionist fed samples, through `stages`, checked against `model`.
    static func sent<Output: Equatable & Sendable, Stage: StageModel>(
        _ name: String,
        delivery: ModelDelivery<Output> = .immediate,
        model: @escaping @Sendable (StageParameters) -> Stage,
        stages: @escaping @Sendable (Sent<Sample, Sample>, StageParameters, LateScheduler) -> Sent<Sample, Output>
    ) -> ModelCase where Stage.Input == Sample, Stage.Output == Output {
        sent(name, input: { $0 }, delivery: delivery, model: model, stages: stages)
    }

    /// An observation of a box starting at 0, written the samples' values, through `stages`, whose
    /// outputs `convert` makes comparable; checked against `model`, which gets `ChangeModel`s.
    ///
    /// - Parameter stagesKeepModel: the stages hold changes themselves, which keep the box alive.
    static func observed<Delivered: Sendable, Output: Equatable & Sendable, Stage: StageModel>(
        _ name: String,
        stagesKeepModel: Bool,
        delivery: ModelDelivery<Output> = .immediate,
        model: @escaping @Sendable (StageParameters) -> Stage,
        convert: @escaping @Sendable (Delivered) -> Output,
        stages:
            @escaping @Sendable (PropertyObservation<ObservableValue<Int>, Int>, StageParameters, LateScheduler) ->
            Observing<Delivered>
    ) -> ModelCase where Stage.Input == ChangeModel, Stage.Output == Output {
        let generator = OperationGenerator(runsTarget: delivery.isManual, releasesSource: true)
        return ModelCase(name: name, generator: generator) { operations, parameters in
            let expected = ModelRun.timeline(
                of: operations,
                stage: model(parameters),
                source: .observed({ $0 }, stagesKeepModel: stagesKeepModel),
                delivery: delivery,
                lateness: parameters.lateness
            )
            let actual = recordedTimeline(of: operations, parameters) { clock, record in
                let box = ObservableValue(0)
                let holder = BoxHolder(box)
                let scheduler = LateScheduler(base: clock, lateness: .milliseconds(parameters.lateness))
                let pipeline = stages(box.receptionist(), parameters, scheduler)
                let target = delivery.isManual ? ManualTarget() : nil
                let deliver: @Sendable (Delivered) -> Void = { record(convert($0)) }
                let token =
                    if let target { pipeline.deliver(on: target, deliver) } else {
                        pipeline.deliver(on: .immediate, deliver)
                    }
                return PipelineSubject(
                    send: { holder.write($0.value) },
                    flush: { token.flush() },
                    finish: { token.finish() },
                    cancel: { token.cancel() },
                    runTarget: { target?.runAll() },
                    releaseSource: { holder.release() },
                    isFinished: { token.isFinished },
                    isCancelled: { token.isCancelled },
                    statistics: { token.statistics },
                    endsWhileAdvancing: true
                )
            }
            return Mismatch(expected, actual)
        }
    }

    /// A delivered change as the models see it.
    @Sendable
    static func changeModel(_ change: BoxChange) -> ChangeModel {
        ChangeModel(old: change.oldValue, new: change.newValue, count: change.coalescedCount)
    }
}

extension ModelCase.Mismatch {
    /// The two timelines, rendered, if they differ.
    init?<Output>(_ expected: [TimelineEntry<Output>], _ actual: [TimelineEntry<Output>]) {
        guard expected != actual else { return nil }
        self.init(expected: Self.render(expected), actual: Self.render(actual))
    }

    static func render<Output>(_ timeline: [TimelineEntry<Output>]) -> String {
        "[" + timeline.map(\.description).joined(separator: ", ") + "]"
    }
}

extension ModelDelivery {
    var isManual: Bool {
        if case .manual = self { return true }
        return false
    }
}
