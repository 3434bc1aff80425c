import Dispatch
import Testing

@testable import Receptionist

/// The deprecated spelling `scheduler: queue` (from when a queue was a scheduler) still compiles
/// and means `scheduler: .on(queue)`.
@Suite struct TargetAsSchedulerTests {
    @available(*, deprecated, message: "exercises the deprecated spelling on purpose")
    @Test func aQueueGivenAsTheSchedulerRunsTheStagesTimersOnIt() {
        let queue = DispatchQueue(label: "TargetAsSchedulerTests")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let batches = Recorder<[Int]>()
        let onQueue = Recorder<Bool>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 100, every: .milliseconds(5), scheduler: queue)
            .deliver(on: .immediate) { batch in
                // Delivered inline by the stage that emits it: by the timer, on its scheduler.
                onQueue.append(DispatchQueue.getSpecific(key: key) == true)
                batches.append(batch)
            }
        receptionist.send(1)
        receptionist.send(2)
        // The timer fires on `queue` after 5 ms: a bounded wait, nothing depends on its length.
        // On a loaded machine it may fire between the two sends, so the batch boundaries are not
        // checked, only the contents and where the timer ran.
        #expect(waitUntil { batches.values.joined().count == 2 })
        #expect(Array(batches.values.joined()) == [1, 2])
        #expect(onQueue.values.allSatisfy { $0 } && !onQueue.values.isEmpty, "the timer ran on the queue given")
        receptionist.cancel()
    }
}
