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
        // One element: nothing but the timer can hand its batch on (a second send could find the
        // window over and flush the first itself, on the sending thread), so the batch is
        // delivered by the timer, on `queue`, after 5 ms (a bounded wait; nothing depends on its
        // length). Sent on `queue` itself: sent from another thread, a sender preempted for 5 ms
        // before its drain let go of the pipeline's intake found the timer's fire queued there and
        // ran it on its own thread (seen once under a loaded test run). On `queue`, the fire waits
        // for the send to return; a timer on any other queue would still deliver there.
        queue.sync { _ = receptionist.send(1) }
        #expect(waitUntil { batches.count == 1 })
        #expect(batches.values == [[1]])
        #expect(onQueue.values == [true], "the timer ran on the queue given")
        receptionist.cancel()
    }
}
