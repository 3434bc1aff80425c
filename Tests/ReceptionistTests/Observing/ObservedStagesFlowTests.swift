import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// Where the changes of an observation with stages wait while the stages are busy (issue 34,
/// item 3): in the stages' intake, which the writes feed themselves, as a hub post or a staged
/// receptionist's send does. There the pipeline's policy bounds them and the statistics count
/// them; a buffer of the observation's own in front of the intake hid them from both.
@Suite struct ObservedStagesFlowTests {
    /// Holds the stages: the first write runs them on its own thread and its `map` waits in there
    /// until `release()`.
    final class HeldStages: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let firstWriteReturned = DispatchSemaphore(value: 0)

        func stage(_ value: Double) -> Double {
            if value == 1 {
                entered.signal()
                proceed.wait()
            }
            return value
        }

        /// Writes 1 on a thread of its own and returns once that write holds the stages.
        func hold(_ thermometer: Thermometer) {
            Thread {
                thermometer.celsius = 1
                self.firstWriteReturned.signal()
            }.start()
            entered.wait()
        }

        /// Lets the stages go on, and returns once the first write returned: the writer that
        /// found the stages idle runs them for what waited meanwhile (less than a drain's budget).
        func release() {
            proceed.signal()
            firstWriteReturned.wait()
        }
    }

    @Test func aDroppingPolicyBoundsTheChangesWaitingForBusyStages() {
        let thermometer = Thermometer()
        let held = HeldStages()
        let seen = Recorder<Double>()
        let token = thermometer.receptionist(for: \.celsius)
            .map { held.stage($0.newValue) }
            .deliver(on: .immediate, buffering: .dropNewest(capacity: 10)) { seen.append($0) }
        held.hold(thermometer)
        for value in 2...1001 { thermometer.celsius = Double(value) }
        held.release()
        // 10 changes waited for the stages; the 990 written after them were dropped there.
        #expect(seen.values == (1...11).map(Double.init))
        let statistics = token.statistics
        #expect(statistics.received == 1001)
        #expect(statistics.dropped == 990)
        #expect(statistics.delivered == 11)
        token.cancel()
    }

    @Test func theChangesWaitingForBusyStagesShowInTheIntakeStatistics() {
        let thermometer = Thermometer()
        let held = HeldStages()
        let seen = Recorder<Double>()
        let token = thermometer.receptionist(for: \.celsius)
            .map { held.stage($0.newValue) }
            .deliver(on: .immediate) { seen.append($0) }
        held.hold(thermometer)
        for value in 2...101 { thermometer.celsius = Double(value) }
        #expect(token.intakeStatistics?.pending == 100)
        held.release()
        #expect(seen.values == (1...101).map(Double.init))
        #expect(token.intakeStatistics?.maxPending == 100)
        #expect(token.intakeStatistics?.pending == 0)
        token.cancel()
    }

    /// A stage closure that writes the model it observes: the write enters the intake behind the
    /// change being processed, and the same drain runs the stages for it next.
    @Test func aStageThatWritesItsModelIsProcessedAfterTheCurrentChange() {
        let thermometer = Thermometer()
        let seen = Recorder<Double>()
        let token = thermometer.receptionist(for: \.celsius)
            .map { change -> Double in
                if change.newValue < 3 { thermometer.celsius = change.newValue + 1 }
                return change.newValue
            }
            .deliver(on: .immediate) { seen.append($0) }
        thermometer.celsius = 1
        #expect(seen.values == [1, 2, 3])
        #expect(token.statistics.delivered == 3)
        token.cancel()
    }
}
