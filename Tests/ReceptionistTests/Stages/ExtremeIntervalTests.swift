import Foundation
import Testing

@testable import Receptionist

/// Intervals at the extremes, on every kind of scheduler. The smallest positive interval works
/// like any short one. An interval too long for the clock (`Int64.max` seconds, `Double` seconds
/// beyond `Int64`) means "not in this process's lifetime": nothing is handed on by time, and
/// `finish()` hands on what the stage holds; on a manual clock advanced that far, the timer fires.
/// Nothing traps. No test waits for a timer not to fire: the manual clock shows it by advancing,
/// and on the uptime clock every deadline the stage arms is read as the `DispatchTime` Dispatch
/// gets (`.distantFuture`: never). (`.zero` and negative intervals are rejected: see StageConfigurationTests.)
@Suite struct ExtremeIntervalTests {
    enum Clock: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case stageDefault, dispatchQueue, operationQueue, manual
        var testDescription: String { rawValue }

        func make() -> any DeliveryScheduler {
            switch self {
            case .stageDefault: QueueScheduler.stageTimers
            case .dispatchQueue: DeadlineRecorder(.on(DispatchQueue(label: "extreme-interval")))
            case .operationQueue: DeadlineRecorder(.on(OperationQueue()))
            case .manual: ManualScheduler()
            }
        }
    }

    enum Stage: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case throttleLatest, throttleTrailing, debounce, debounceMaxWait, batchCountAndTime, batchTime
        var testDescription: String { rawValue }

        func deliver(
            _ interval: Duration, on scheduler: any DeliveryScheduler, into recorder: Recorder<[Int]>
        ) -> Receptionist<Int> {
            let pipeline = Receptionist.pipeline(of: Int.self)
            func start(_ stage: Pipeline<ReceptionistInput<Int>, [Int]>) -> Receptionist<Int> {
                stage.deliver(on: .immediate) { recorder.append($0) }
            }
            return switch self {
            case .throttleLatest:
                start(pipeline.throttle(for: interval, scheduler: scheduler, latest: true).map { [$0] })
            case .throttleTrailing:
                start(
                    pipeline.throttle(for: interval, scheduler: scheduler, leading: false, trailing: true).map { [$0] })
            case .debounce:
                start(pipeline.debounce(for: interval, scheduler: scheduler).map { [$0] })
            case .debounceMaxWait:
                start(pipeline.debounce(for: interval, maxWait: interval, scheduler: scheduler).map { [$0] })
            case .batchCountAndTime:
                start(pipeline.batch(count: .max, every: interval, scheduler: scheduler))
            case .batchTime:
                start(pipeline.batch(every: interval, scheduler: scheduler))
            }
        }

        /// What the stage hands on at once, before any timer fires, for the input 1, 2, 3.
        var atOnce: [[Int]] { self == .throttleLatest ? [[1]] : [] }
        /// What it hands on once its timer fired (or it finished), for the input 1, 2, 3.
        var inTheEnd: [[Int]] {
            switch self {
            case .throttleLatest: [[1], [3]]
            case .throttleTrailing, .debounce, .debounceMaxWait: [[3]]
            case .batchCountAndTime, .batchTime: [[1, 2, 3]]
            }
        }
    }

    static let tooLong: [Duration] = [.seconds(Int64.max), .seconds(1e20)]

    @Test(arguments: Stage.allCases, Clock.allCases)
    func anIntervalTooLongForTheClockMeansNeverAndFinishHandsOn(stage: Stage, clock: Clock) {
        for interval in Self.tooLong {
            let scheduler = clock.make()
            let recorder = Recorder<[Int]>()
            let receptionist = stage.deliver(interval, on: scheduler, into: recorder)
            for value in 1...3 { receptionist.send(value) }
            if let manual = scheduler as? ManualScheduler {
                // A wrongly armed timer (a deadline that wrapped round) fires here.
                manual.advance(by: .seconds(3600))
            } else if let recorder = scheduler as? DeadlineRecorder {
                // What Dispatch was asked for: a wrapped deadline would be due soon, or at once.
                let deadlines = recorder.deadlines
                #expect(!deadlines.isEmpty, "the stage armed a timer, \(interval)")
                #expect(deadlines.allSatisfy { $0 == .distantFuture }, "every timer is due never, \(interval)")
            }
            #expect(recorder.values == stage.atOnce, "before finish, \(interval)")
            receptionist.finish()
            #expect(waitUntil(seconds: 30) { receptionist.isFinished }, "finished, \(interval)")
            #expect(recorder.values == stage.inTheEnd, "finish handed on what was held, \(interval)")
        }
    }

    @Test(arguments: Stage.allCases)
    func aManualClockAdvancedThatFarFiresTheTimer(stage: Stage) {
        for interval in Self.tooLong {
            let clock = ManualScheduler()
            let recorder = Recorder<[Int]>()
            let receptionist = stage.deliver(interval, on: clock, into: recorder)
            for value in 1...3 { receptionist.send(value) }
            clock.advance(by: interval)
            #expect(recorder.values == stage.inTheEnd, "\(interval)")
            receptionist.cancel()
        }
    }

    @Test(arguments: Stage.allCases, Clock.allCases)
    func theSmallestPositiveIntervalWorks(stage: Stage, clock: Clock) {
        let attosecond = Duration(secondsComponent: 0, attosecondsComponent: 1)
        let scheduler = clock.make()
        let recorder = Recorder<[Int]>()
        let receptionist = stage.deliver(attosecond, on: scheduler, into: recorder)
        for value in 1...3 { receptionist.send(value) }
        let manual = scheduler as? ManualScheduler
        manual?.advance(by: attosecond)
        // Whatever the windows were, the outputs keep the input's order, and the last value
        // arrives by time, without finish().
        #expect(waitUntil(seconds: 30) { recorder.values.last?.last == 3 }, "the last value arrived by time")
        let flat = recorder.values.flatMap { $0 }
        #expect(flat == flat.sorted() && Set(flat).count == flat.count, "in order, none twice: \(flat)")
        if stage == .batchTime || stage == .batchCountAndTime {
            #expect(flat == [1, 2, 3], "a batch loses nothing")
        }
        receptionist.cancel()
    }
}

/// A ``QueueScheduler`` that notes the `DispatchTime` of every deadline it is given, so that a
/// test reads when a timer is due instead of waiting to see whether it fires.
private final class DeadlineRecorder: DeliveryScheduler {
    let base: QueueScheduler
    private let recorded = Locked<[DispatchTime]>(uncounted: [])

    init(_ base: QueueScheduler) {
        self.base = base
    }

    /// The deadlines given so far, as Dispatch gets them.
    var deadlines: [DispatchTime] { recorded.withLock { $0 } }

    var now: SchedulerInstant { base.now }

    func submit(_ work: @escaping @Sendable () -> Void) {
        base.submit(work)
    }

    func submit(at deadline: SchedulerInstant, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        recorded.withLock { $0.append(deadline.dispatchTime) }
        return base.submit(at: deadline, work)
    }
}
