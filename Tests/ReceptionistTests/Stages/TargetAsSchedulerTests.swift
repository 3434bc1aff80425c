import Dispatch
import Testing

@testable import Receptionist

/// The deprecated spelling `scheduler: queue` (from when a queue was a scheduler) still compiles
/// and means `scheduler: .on(queue)`.
@Suite struct TargetAsSchedulerTests {
    @available(*, deprecated, message: "exercises the deprecated spelling on purpose")
    @Test func aQueueGivenAsTheSchedulerRunsTheStagesTimersOnIt() {
        let queue = DispatchQueue(label: "TargetAsSchedulerTests")
        let batches = Recorder<[Int]>()
        let receptionist = Receptionist.pipeline(of: Int.self)
            .batch(count: 100, every: .milliseconds(5), scheduler: queue)
            .deliver(on: .immediate) { batches.append($0) }
        // Suspended while sending, so that the timer cannot fire between the two sends however
        // slow the machine (under load it did, and the batches were [[1], [2]]).
        queue.suspend()
        receptionist.send(1)
        receptionist.send(2)
        queue.resume()
        // The timer fires on `queue` after 5 ms: a bounded wait, nothing depends on its length.
        #expect(waitUntil { batches.count == 1 })
        #expect(batches.values == [[1, 2]])
        receptionist.cancel()
    }
}
