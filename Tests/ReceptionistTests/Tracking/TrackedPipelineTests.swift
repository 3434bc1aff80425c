import Dispatch
import Foundation
import Observation
import Testing

@testable import Receptionist

/// A tracked property is a pipeline source like any other: stages, `values()`, `finish()`.
@Suite struct TrackedPipelineTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func stagesRunOnTheValuesReadAndFinishAfterTheLastRead() {
        let model = TrackingCounter()
        let recorder = Recorder<Int>()
        let delivered = DispatchSemaphore(value: 0)
        let token = Receptionist.tracking(\.count, of: model, options: .initial)
            .map { $0 * 10 }
            .removeDuplicates()
            .deliver(on: .immediate) { value in
                recorder.append(value)
                delivered.signal()
            }
        #expect(wait(delivered), "the initial value")
        model.count = 1
        #expect(wait(delivered))
        model.count = 1  // reported and read again; the stage drops the repeat
        token.finish()  // the read already requested is still made, then the stages finish
        #expect(waitUntil { token.isFinished })
        #expect(recorder.values == [0, 10])
        #expect(!token.isCancelled)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theStagesFinishWhenTheModelIsDeallocated() {
        let counter = LifetimeCounter()
        var model: TrackingCounter? = TrackingCounter(lifetime: LifetimeWitness(counter))
        let recorder = Recorder<[Int]>()
        let read = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model!, options: .initial)
            .map { value in
                read.append(value)
                return value
            }
            .batch(count: 100)
            .deliver(on: .immediate) { recorder.append($0) }
        #expect(waitUntil { read.count == 1 }, "the initial value waits in the batch")
        model = nil
        #expect(counter.deinitialized == 1, "the tracking does not keep the model alive")
        #expect(waitUntil { token.isFinished }, "the partial batch is handed on, then the pipeline ends")
        #expect(recorder.values == [[0]])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func cancelStopsTheReadsAndTheStages() {
        let model = TrackingCounter()
        let recorder = Recorder<Int>()
        let clock = ManualScheduler()
        let token = Receptionist.tracking(\.count, of: model, options: .initial)
            .debounce(for: .seconds(1), scheduler: clock)
            .deliver(on: .immediate) { recorder.append($0) }
        #expect(waitUntil { clock.pendingCount == 1 }, "the initial value waits for the quiet time")
        token.cancel()
        #expect(token.isCancelled)
        #expect(clock.pendingCount == 0, "its timer is cancelled")
        model.count = 5
        clock.advance(by: .seconds(2))
        #expect(recorder.values.isEmpty)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func trackedValuesAsAnAsyncSequence() async {
        var model: TrackingCounter? = TrackingCounter(3)
        let values = Receptionist.tracking(\.count, of: model!, options: .initial).values()
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == 3)
        model!.count = 4
        #expect(await iterator.next() == 4)
        model = nil
        #expect(await iterator.next() == nil, "the sequence ends with the model")
    }
}
