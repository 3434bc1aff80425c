import Dispatch
import Foundation
import Observation
import Testing

@testable import Receptionist

/// Every observed source × every stage and combination the docs show × every kind of target:
/// the model is written, changes are left pending (the target is held up, or a stage holds them),
/// the test lets go of the model, then lets the target and the stages' clock go on. Then:
/// - the model was deallocated (nothing but pending changes kept it alive),
/// - the observation finished by itself (not cancelled),
/// - the task block and what it captures were released,
/// - what was pending was delivered: every change for lossless stages, the last value for those
///   that hand on what they hold when the observation finishes.
@Suite struct LifetimeMatrixTests {
    @Test(arguments: LifetimeSource.allCases, LifetimeTarget.allCases)
    func releasingTheModelFinishesTheObservationAndDeliversWhatWasPending(
        source: LifetimeSource, target: LifetimeTarget
    ) async {
        for stage in LifetimeStage.allCases {
            // A tracking without stages reads on the target: `.immediate` is documented to stop
            // the program there.
            if source == .tracking, stage == .none, target == .immediate { continue }
            await check(source, stage, target)
        }
    }

    private func check(_ source: LifetimeSource, _ stage: LifetimeStage, _ target: LifetimeTarget) async {
        let context = "\(source) → \(stage) → \(target)"
        let run = LifetimeRun(target: target)
        let writes = Array(1...6)
        weak var weakModel: AnyObject?
        let token: ObservationToken
        do {
            switch source {
            case .observed:
                let model = LifetimeModel()
                weakModel = model
                token = stage.observe(model.receptionist(for: \.value), run)
                run.holdTarget()
                for value in writes { model.value = value }
            case .box:
                let box = ObservableValue(0)
                weakModel = box
                token = stage.observe(box.receptionist(), run)
                run.holdTarget()
                for value in writes { box.value = value }
            case .tracking:
                guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *) else { return }
                let model = TrackingCounter()
                weakModel = model
                token = stage.observe(Receptionist.tracking(\.count, of: model), run)
                run.holdTarget()
                for value in writes { model.count = value }
            }
        }
        // The test has let go of the model; the target goes on, then the stages' timers fire.
        await run.releaseTarget()
        run.clock.advance(by: .seconds(3_600))
        let ended = await run.waitUntil { token.isFinished && run.taskBlockReleased }
        #expect(ended, "\(context): the observation finishes and releases its task block")
        #expect(weakModel == nil, "\(context): the model is deallocated")
        #expect(!token.isCancelled, "\(context): it finished, it was not cancelled")
        let delivered = run.delivered.values
        stage.checkDelivered(delivered, writes: writes, source: source, context)
        #expect(token.statistics.discarded == 0, "\(context): nothing pending was discarded")
    }
}

// MARK: - Sources, stages, targets

enum LifetimeSource: CaseIterable, Sendable {
    /// An `@Observed` property of an `ObservableModel`.
    case observed
    /// An `ObservableValue`.
    case box
    /// An `@Observable` model's property, tracked.
    case tracking
}

/// An `ObservableModel` whose only reference the test holds.
final class LifetimeModel: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var value = 0
}

/// The stages and combinations of the README and the Stages article.
enum LifetimeStage: CaseIterable, Sendable {
    case none
    case filter
    case map
    case compactMap
    case removeDuplicates
    case removeDuplicatesBy
    case scan
    case coalesce
    case batchCount
    case batchEvery
    case batchCountEvery
    case throttleLatest
    case throttleFirst
    case throttleTrailing
    case debounce
    case debounceMaxWait
    /// The docs' way to let a model go while a count-only batch waits.
    case mapThenBatchCount
    case removeDuplicatesThenDebounce
    case filterThenCoalesce

    typealias Changes<Model: AnyObject & Sendable> = Pipeline<ObservedProperty<Model, Int>, ObservedChange<Model, Int>>

    private static let interval = Duration.milliseconds(10)

    /// Starts an observation of changes through this stage, recording the new values each
    /// output carries.
    func observe<Model>(_ changes: Changes<Model>, _ run: LifetimeRun) -> ObservationToken {
        let clock = run.clock
        switch self {
        case .none: return run.deliver(changes) { [$0.newValue] }
        case .filter: return run.deliver(changes.filter { $0.newValue > 0 }) { [$0.newValue] }
        case .map: return run.deliver(changes.map(\.newValue)) { [$0] }
        case .compactMap: return run.deliver(changes.compactMap { $0.newValue }) { [$0] }
        case .removeDuplicates: return run.deliver(changes.removeDuplicates()) { [$0.newValue] }
        case .removeDuplicatesBy:
            return run.deliver(changes.removeDuplicates { $0.newValue == $1.newValue }) { [$0.newValue] }
        case .scan: return run.deliver(changes.scan(0) { $0 + $1.newValue }) { [$0] }
        case .coalesce: return run.deliver(changes.coalesce()) { [$0.newValue] }
        case .batchCount: return run.deliver(changes.batch(count: 3)) { $0.map(\.newValue) }
        case .batchEvery:
            return run.deliver(changes.batch(every: Self.interval, scheduler: clock)) { $0.map(\.newValue) }
        case .batchCountEvery:
            return run.deliver(changes.batch(count: 4, every: Self.interval, scheduler: clock)) { $0.map(\.newValue) }
        case .throttleLatest:
            return run.deliver(changes.throttle(for: Self.interval, scheduler: clock, latest: true)) { [$0.newValue] }
        case .throttleFirst:
            return run.deliver(changes.throttle(for: Self.interval, scheduler: clock, latest: false)) {
                [$0.newValue]
            }
        case .throttleTrailing:
            let throttled = changes.throttle(for: Self.interval, scheduler: clock, leading: false, trailing: true)
            return run.deliver(throttled) { [$0.newValue] }
        case .debounce:
            return run.deliver(changes.debounce(for: Self.interval, scheduler: clock)) { [$0.newValue] }
        case .debounceMaxWait:
            let debounced = changes.debounce(for: Self.interval, maxWait: Self.interval * 3, scheduler: clock)
            return run.deliver(debounced) { [$0.newValue] }
        case .mapThenBatchCount: return run.deliver(changes.map(\.newValue).batch(count: 4)) { $0 }
        case .removeDuplicatesThenDebounce:
            let debounced = changes.removeDuplicates().debounce(for: Self.interval, scheduler: clock)
            return run.deliver(debounced) { [$0.newValue] }
        case .filterThenCoalesce:
            return run.deliver(changes.filter { $0.newValue > 0 }.coalesce()) { [$0.newValue] }
        }
    }

    /// Starts a tracking through this stage (the same stages, on values).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    func observe<Model>(_ values: Pipeline<TrackedProperty<Model, Int>, Int>, _ run: LifetimeRun) -> ObservationToken {
        let clock = run.clock
        switch self {
        case .none: return run.deliver(values) { [$0] }
        case .filter, .filterThenCoalesce: return run.deliver(values.filter { $0 > 0 }) { [$0] }
        case .map, .compactMap: return run.deliver(values.compactMap { $0 }) { [$0] }
        case .removeDuplicates, .removeDuplicatesBy: return run.deliver(values.removeDuplicates()) { [$0] }
        case .scan: return run.deliver(values.scan(0) { max($0, $1) }) { [$0] }
        case .coalesce: return run.deliver(values.coalesce()) { [$0.latest] }
        case .batchCount, .mapThenBatchCount: return run.deliver(values.batch(count: 3)) { $0 }
        case .batchEvery: return run.deliver(values.batch(every: Self.interval, scheduler: clock)) { $0 }
        case .batchCountEvery:
            return run.deliver(values.batch(count: 4, every: Self.interval, scheduler: clock)) { $0 }
        case .throttleLatest, .throttleTrailing:
            return run.deliver(values.throttle(for: Self.interval, scheduler: clock, latest: true)) { [$0] }
        case .throttleFirst:
            return run.deliver(values.throttle(for: Self.interval, scheduler: clock, latest: false)) { [$0] }
        case .debounce, .debounceMaxWait, .removeDuplicatesThenDebounce:
            let debounced = values.debounce(for: Self.interval, maxWait: Self.interval * 3, scheduler: clock)
            return run.deliver(debounced) { [$0] }
        }
    }

    /// Checks what was delivered, as the stage's documentation promises.
    func checkDelivered(_ outputs: [[Int]], writes: [Int], source: LifetimeSource, _ context: String) {
        let values = outputs.flatMap { $0 }
        if source == .tracking {
            // A tracking delivers values read at delivery time, and a read still waiting when
            // the model went finds nothing: in order (the writes only grow), possibly repeated.
            #expect(values == values.sorted(), "\(context): delivered in order: \(values)")
            #expect(values.allSatisfy(writes.contains), "\(context): only written values: \(values)")
            return
        }
        switch self {
        case .none, .filter, .map, .compactMap, .removeDuplicates, .removeDuplicatesBy, .batchCount, .batchEvery,
            .batchCountEvery, .mapThenBatchCount:
            #expect(values == writes, "\(context): every change, in order")
        case .scan:
            #expect(values == [1, 3, 6, 10, 15, 21], "\(context): every running sum")
        case .coalesce, .filterThenCoalesce, .throttleLatest, .throttleTrailing, .debounce, .debounceMaxWait,
            .removeDuplicatesThenDebounce:
            #expect(values == values.sorted() && Set(values).count == values.count, "\(context): in order: \(values)")
            #expect(values.last == writes.last, "\(context): ends on the last value: \(values)")
        case .throttleFirst:
            // Documented: keeping the first element of a window can lose the last value.
            #expect(values == values.sorted() && !values.isEmpty, "\(context): in order: \(values)")
        }
    }
}

enum LifetimeTarget: CaseIterable, Sendable {
    case serialQueue
    case operationQueue
    case immediate
    case manual
    case mainActor
    case actor
}

/// An actor to deliver to, whose jobs run on a dispatch queue: the test holds the actor up by
/// holding up that queue, without taking a thread of the cooperative pool.
actor LifetimeActor {
    final class QueueExecutor: SerialExecutor {
        let queue = DispatchQueue(label: "lifetime.actor")

        // `UnownedJob`, not `ExecutorJob`, which needs macOS 14 (the package's floor is 13).
        func enqueue(_ job: UnownedJob) {
            let executor = asUnownedSerialExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }

        func asUnownedSerialExecutor() -> UnownedSerialExecutor {
            UnownedSerialExecutor(ordinary: self)
        }
    }

    let executor = QueueExecutor()
    private(set) var received = 0

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func note() { received += 1 }
}

/// One observation under test: where it delivers, the stages' clock, what was delivered, and
/// whether the task block was released.
final class LifetimeRun: Sendable {
    let target: LifetimeTarget
    let clock = ManualScheduler()
    let delivered = Recorder<[Int]>()
    private let lifetimes = LifetimeCounter()
    private let queue = DispatchQueue(label: "lifetime.target")
    private let operations: OperationQueue
    private let manual = ManualTarget()
    private let actor = LifetimeActor()
    private let gate = DispatchSemaphore(value: 0)

    init(target: LifetimeTarget) {
        self.target = target
        let operations = OperationQueue()
        operations.maxConcurrentOperationCount = 1
        self.operations = operations
    }

    var taskBlockReleased: Bool { lifetimes.deinitialized == 1 }

    /// Starts `pipeline` on this run's target; the task block records `values(output)` and
    /// captures a witness of its lifetime.
    func deliver<Source: PipelineSource, Output: Sendable>(
        _ pipeline: Pipeline<Source, Output>,
        values: @escaping @Sendable (Output) -> [Int]
    ) -> ObservationToken where Source.Handle == ObservationToken {
        let witness = LifetimeWitness(lifetimes)
        let delivered = delivered
        switch target {
        case .serialQueue:
            return pipeline.deliver(on: queue) { [witness] in
                witness.touch()
                delivered.append(values($0))
            }
        case .operationQueue:
            return pipeline.deliver(on: operations) { [witness] in
                witness.touch()
                delivered.append(values($0))
            }
        case .immediate:
            return pipeline.deliver(on: .immediate) { [witness] in
                witness.touch()
                delivered.append(values($0))
            }
        case .manual:
            return pipeline.deliver(on: manual) { [witness] in
                witness.touch()
                delivered.append(values($0))
            }
        case .mainActor:
            return pipeline.deliver(on: .mainActor) { [witness] in
                MainActor.preconditionIsolated()
                witness.touch()
                delivered.append(values($0))
            }
        case .actor:
            return pipeline.deliver(on: actor) { [witness] actor, output in
                actor.note()
                witness.touch()
                delivered.append(values(output))
            }
        }
    }

    /// Holds the target up, so that the changes about to be made wait for it.
    func holdTarget() {
        let started = DispatchSemaphore(value: 0)
        let gate = gate
        switch target {
        case .serialQueue:
            queue.async {
                started.signal()
                gate.wait()
            }
        case .operationQueue:
            operations.addOperation {
                started.signal()
                gate.wait()
            }
        case .mainActor:
            DispatchQueue.main.async {
                started.signal()
                gate.wait()
            }
        case .actor:
            actor.executor.queue.async {
                started.signal()
                gate.wait()
            }
        case .immediate, .manual:
            // `.immediate` cannot be held; a manual target runs only when the test says so.
            return
        }
        #expect(wait(started), "the target was held up")
    }

    /// Lets the target run what waits.
    func releaseTarget() async {
        switch target {
        case .serialQueue, .operationQueue, .mainActor, .actor: gate.signal()
        case .manual: manual.runAll()
        case .immediate: break
        }
    }

    /// Waits until `condition` holds, running the manual target meanwhile; gives up after two
    /// minutes (a failure guard, not a timing assumption).
    func waitUntil(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            if target == .manual { manual.runAll() }
            try? await Task.sleep(for: .microseconds(200))
        }
        return true
    }
}
