import Foundation
import Testing

@testable import Receptionist

/// Invalid stage configuration stops the program with a message naming the operator and the
/// parameter, at the call that builds the pipeline (not later, inside a running stage).
@Suite struct StageConfigurationTests {
    private func message(_ result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }

    @Test(.exitTest) func batchRejectsACountOfZero() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).batch(
                count: 0, every: .milliseconds(10), scheduler: ManualScheduler())
        }
        #expect(message(result).contains("batch(count:every:) count must be at least 1, got 0"))
    }

    @Test(.exitTest) func countOnlyBatchRejectsANegativeCount() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).batch(count: -3)
        }
        #expect(message(result).contains("batch(count:) count must be at least 1, got -3"))
    }

    @Test(.exitTest) func batchRejectsAZeroInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).batch(count: 10, every: .zero, scheduler: ManualScheduler())
        }
        #expect(message(result).contains("batch(count:every:) interval must be greater than zero, got 0.0 seconds"))
    }

    @Test(.exitTest) func contentBatchRejectsACountOfZero() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).batch(by: { $0 % 2 }, count: 0)
        }
        #expect(message(result).contains("batch(by:count:) count must be at least 1, got 0"))
    }

    @Test(.exitTest) func contentBatchRejectsAZeroInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).batch(
                while: { $0 < $1 }, every: .zero, scheduler: ManualScheduler())
        }
        #expect(
            message(result).contains("batch(while:count:every:) interval must be greater than zero, got 0.0 seconds"))
    }

    @Test(.exitTest) func timeOnlyBatchRejectsANegativeInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ObservableValue(0).receptionist().batch(every: .milliseconds(-5), scheduler: ManualScheduler())
        }
        #expect(message(result).contains("batch(every:) interval must be greater than zero, got -0.005 seconds"))
    }

    @Test(.exitTest) func throttleRejectsAZeroInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).throttle(for: .zero, scheduler: ManualScheduler(), latest: true)
        }
        #expect(message(result).contains("throttle(for:latest:) interval must be greater than zero, got 0.0 seconds"))
    }

    @Test(.exitTest) func debounceRejectsANegativeInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).debounce(for: .seconds(-1), scheduler: ManualScheduler())
        }
        #expect(message(result).contains("debounce(for:) interval must be greater than zero, got -1.0 seconds"))
    }

    @Test(.exitTest) func aStageAfterCoalesceIsRejectedWithAMessageNamingTheStage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.pipeline(of: Int.self).coalesce().map(\.latest)
        }
        #expect(message(result).contains("map(_:) after coalesce(): coalesce() must be the last stage"))
    }

    @Test(.exitTest) func coalescingTwiceIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ObservableValue(0).receptionist().coalesce().coalesce()
        }
        #expect(message(result).contains("coalesce() after coalesce()"))
    }

    @Test func validConfigurationsAreAccepted() {
        let clock = ManualScheduler()
        let recorder = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 1, every: .nanoseconds(1), scheduler: clock)
            .deliver(on: .immediate) { recorder.append($0) }
        receptionist.send(7)
        #expect(recorder.values == [[7]])
    }
}
