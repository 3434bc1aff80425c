import Dispatch
import Foundation
import Testing

@testable import Receptionist

@Suite struct SchedulerInstantTests {
    @Test func addsSubtractsAndMeasures() {
        let start = SchedulerInstant.zero + .seconds(2)
        #expect(start.offset == .seconds(2))
        #expect(start - .milliseconds(500) == SchedulerInstant(offset: .milliseconds(1500)))
        #expect(start.duration(to: start + .seconds(3)) == .seconds(3))
        #expect((start + .seconds(3)).duration(to: start) == .seconds(-3))
        #expect(SchedulerInstant.zero.offset == .zero)
    }

    @Test func ordersByOffset() {
        let instants = [3, -1, 0, 2].map { SchedulerInstant.zero + .seconds($0) }
        #expect(instants.sorted().map(\.offset) == [-1, 0, 2, 3].map { Duration.seconds($0) })
        #expect(Set(instants + instants).count == 4)
    }

    @Test func describesTheOffset() {
        #expect((SchedulerInstant.zero + .milliseconds(1500)).description == "t+1.5 seconds")
        #expect((SchedulerInstant.zero - .seconds(1)).description == "t-1.0 seconds")
    }

    @Test func convertsToDispatchTimeRoundingUp() {
        #expect(SchedulerInstant(offset: .nanoseconds(5)).dispatchTime.uptimeNanoseconds == 5)
        let oneAttosecond = Duration(secondsComponent: 0, attosecondsComponent: 1)
        #expect(SchedulerInstant(offset: .seconds(1) + oneAttosecond).dispatchTime.uptimeNanoseconds == 1_000_000_001)
        #expect(SchedulerInstant(offset: .seconds(-5)).dispatchTime.uptimeNanoseconds == 1)
        #expect(SchedulerInstant.zero.dispatchTime.uptimeNanoseconds == 1)
        #expect(SchedulerInstant(offset: .seconds(Int64.max)).dispatchTime == .distantFuture)
    }

    @Test func dispatchAndOperationQueuesShareTheUptimeClock() {
        let before = DispatchTime.now().uptimeNanoseconds
        let first = QueueScheduler(DispatchQueue.global()).now
        let second = QueueScheduler(OperationQueue()).now
        let after = DispatchTime.now().uptimeNanoseconds
        #expect(first.offset >= .nanoseconds(before))
        #expect(first <= second)
        #expect(second.offset <= .nanoseconds(after))
    }
}

extension SchedulerInstant {
    /// The time from this instant to `other`: negative if `other` is earlier.
    func duration(to other: SchedulerInstant) -> Duration {
        other.offset - offset
    }
}
