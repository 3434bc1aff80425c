import Testing

@testable import Receptionist

/// The decisions of an executor target, without threads: one job at a time, each work item taken
/// once, in submission order; work submitted while a job runs waits for the next job.
@Suite struct ExecutorTargetStateMachineTests {
    /// Runs `work` items and returns what they appended, in order.
    private func run(_ work: [ExecutorTargetStateMachine.Work], into log: Recorder<Int>) -> [Int] {
        for item in work { item() }
        return log.values
    }

    @Test func theFirstSubmissionSchedulesAJobAndTheOthersJoinIt() {
        var machine = ExecutorTargetStateMachine()
        let log = Recorder<Int>()
        #expect(machine.submitted { log.append(1) } == .scheduleJob)
        #expect(machine.submitted { log.append(2) } == .none)
        #expect(machine.submitted { log.append(3) } == .none)
        #expect(machine.waitingCount == 3)
        let taken = machine.jobStarted()
        #expect(machine.waitingCount == 0)
        #expect(run(taken, into: log) == [1, 2, 3])
        #expect(machine.jobEnded() == .none)
        // Idle again: the next submission schedules a job of its own.
        #expect(machine.submitted { log.append(4) } == .scheduleJob)
    }

    @Test func workSubmittedWhileAJobRunsWaitsForTheNextJob() {
        var machine = ExecutorTargetStateMachine()
        let log = Recorder<Int>()
        #expect(machine.submitted { log.append(1) } == .scheduleJob)
        let first = machine.jobStarted()
        // Submitted by the running job (or meanwhile): not taken by it, and no second job while
        // it runs.
        #expect(machine.submitted { log.append(2) } == .none)
        #expect(machine.submitted { log.append(3) } == .none)
        #expect(run(first, into: log) == [1])
        #expect(machine.jobEnded() == .scheduleNextJob)
        // Scheduled, not started: submissions join the scheduled job.
        #expect(machine.submitted { log.append(4) } == .none)
        let second = machine.jobStarted()
        #expect(run(second, into: log) == [1, 2, 3, 4])
        #expect(machine.jobEnded() == .none)
        #expect(machine.waitingCount == 0)
    }
}
