import Dispatch
import Foundation
import Observation
import Testing

@testable import Receptionist

/// Tracking a `Sendable` model on a manual target: every read, arm and delivery is deterministic.
@Suite struct TrackedPropertyTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func initialValueIsReadOnTheTarget() {
        let model = TrackingCounter(3)
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model, options: .initial)
            .deliver(on: target) { recorder.append($0) }
        #expect(recorder.values.isEmpty)
        #expect(target.pendingCount == 1)
        model.count = 4  // before the read runs: the read sees it
        target.runAll()
        #expect(recorder.values == [4])
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func withoutInitialEveryWriteAfterDeliverIsReported() {
        let model = TrackingCounter(3)
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model).deliver(on: target) { recorder.append($0) }
        // Armed on the calling thread: nothing to read yet.
        #expect(target.submissionCount == 0)
        model.count = 1
        target.runAll()
        model.count = 2
        target.runAll()
        #expect(recorder.values == [1, 2])
        #expect(token.statistics.received == 2)
        #expect(token.statistics.delivered == 2)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func writesMadeWhileAReadWaitsAreCoalescedIntoIt() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model).deliver(on: target) { recorder.append($0) }
        for value in 1...5 { model.count = value }
        // One report, one read: the tracking was not armed again until that read runs.
        #expect(target.submissionCount == 1)
        #expect(token.statistics.received == 1)
        target.runAll()
        #expect(recorder.values == [5])
        model.count = 6
        target.runAll()
        #expect(recorder.values == [5, 6])
        #expect(token.statistics.maxPending == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theTaskBlockMayWriteTheModelItTracks() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model, options: .initial).deliver(on: target) { value in
            recorder.append(value)
            if value < 5 { model.increment() }  // re-entrant: reported to the arm made by this read
        }
        target.runAll()
        #expect(recorder.values == [0, 1, 2, 3, 4, 5])
        #expect(token.statistics.maxPending == 1)
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theSameValueMayBeDeliveredTwice() {
        let model = TrackingCounter(5)
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model, options: .initial).deliver(on: target) {
            recorder.append($0)
        }
        target.runAll()
        model.count = 5  // a write of the value it already had is still a reported write
        target.runAll()
        #expect(recorder.values == [5, 5])
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func aComputedKeyPathReportsAChangeOfAnyPropertyItReads() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.total, of: model).deliver(on: target) { recorder.append($0) }
        model.bonus = 10
        target.runAll()
        model.count = 1
        target.runAll()
        #expect(recorder.values == [10, 11])
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func anUntrackedPropertyDeliversItsInitialValueThenFinishes() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.constant, of: model, options: .initial).deliver(on: target) {
            recorder.append($0)
        }
        target.runAll()
        #expect(recorder.values == [7])
        #expect(token.isFinished)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func anUntrackedPropertyWithoutInitialFinishesAtOnce() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let lifetimes = LifetimeCounter()
        let witness = LifetimeWitness(lifetimes)
        let token = Receptionist.tracking(\.constant, of: model).deliver(on: target) { [witness] _ in witness.touch() }
        _ = consume witness
        #expect(token.isFinished)
        #expect(target.submissionCount == 0)
        #expect(lifetimes.deinitialized == 1)
    }
}

extension TrackedPropertyTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func cancelDiscardsAWaitingReadAndReleasesTheTaskBlock() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let lifetimes = LifetimeCounter()
        let witness = LifetimeWitness(lifetimes)
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model).deliver(on: target) { [witness] value in
            witness.touch()
            recorder.append(value)
        }
        _ = consume witness
        model.count = 1
        #expect(target.pendingCount == 1)
        token.cancel()
        #expect(token.isCancelled)
        #expect(lifetimes.deinitialized == 1)
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(token.statistics.discarded == 1)
        // The read that would have armed the tracking again never ran: later writes report nothing.
        model.count = 2
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(target.submissionCount == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func anArmedTrackingReportsNothingAfterCancel() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model).deliver(on: target) { recorder.append($0) }
        token.cancel()
        model.count = 1  // the registration made before cancel fires, and does nothing
        model.count = 2
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(target.submissionCount == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theTaskBlockMayCancelItsOwnTracking() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let tokenBox = Locked<ObservationToken?>(uncounted: nil)
        let token = Receptionist.tracking(\.count, of: model).deliver(on: target) { value in
            recorder.append(value)
            if value == 2 { tokenBox.withLock { $0 }?.cancel() }
        }
        tokenBox.withLock { $0 = token }
        model.count = 1
        target.runAll()
        model.count = 2
        target.runAll()
        model.count = 3
        target.runAll()
        #expect(recorder.values == [1, 2])
        #expect(token.isCancelled)
        tokenBox.withLock { $0 = nil }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func releasingTheTokenCancels() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let lifetimes = LifetimeCounter()
        let witness = LifetimeWitness(lifetimes)
        var token: ObservationToken? = Receptionist.tracking(\.count, of: model).deliver(on: target) { [witness] _ in
            witness.touch()
        }
        _ = consume witness
        #expect(token != nil)
        token = nil
        #expect(lifetimes.deinitialized == 1)
        model.count = 1
        #expect(target.runAll() == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func releasingAFinishingTokenStillDeliversTheRequestedRead() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        var token: ObservationToken? = Receptionist.tracking(\.count, of: model).deliver(on: target) {
            recorder.append($0)
        }
        model.count = 1
        token!.finish()
        token = nil
        target.runAll()
        #expect(recorder.values == [1])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func finishDeliversTheReadAlreadyRequestedThenEnds() {
        let model = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model).deliver(on: target) { recorder.append($0) }
        model.count = 1
        token.finish()
        model.count = 2  // before the read: the read sees it
        target.runAll()
        #expect(recorder.values == [2])
        #expect(token.isFinished)
        model.count = 3
        target.runAll()
        #expect(recorder.values == [2])
    }
}

extension TrackedPropertyTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theTrackingDoesNotKeepTheModelAlive() {
        let modelLifetimes = LifetimeCounter()
        var model: TrackingCounter? = TrackingCounter(lifetime: LifetimeWitness(modelLifetimes))
        let target = ManualTarget()
        let token = Receptionist.tracking(\.count, of: model!, options: .initial).deliver(on: target) { _ in }
        target.runAll()
        model = nil
        #expect(modelLifetimes.deinitialized == 1)
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theModelsDeallocationFinishesTheTracking() {
        let modelLifetimes = LifetimeCounter()
        let taskLifetimes = LifetimeCounter()
        let witness = LifetimeWitness(taskLifetimes)
        var model: TrackingCounter? = TrackingCounter(lifetime: LifetimeWitness(modelLifetimes))
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model!).deliver(on: target) { [witness] value in
            witness.touch()
            recorder.append(value)
        }
        _ = consume witness
        model = nil
        #expect(modelLifetimes.deinitialized == 1)
        // The registrar let the armed tracking go: a last read finds the model gone.
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(token.isFinished)
        #expect(!token.isCancelled)
        #expect(taskLifetimes.deinitialized == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func aModelDeallocatedWhileAReadWaitsFinishesTheTracking() {
        var model: TrackingCounter? = TrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model!).deliver(on: target) { recorder.append($0) }
        model!.count = 1
        model = nil
        target.runAll()
        #expect(recorder.values.isEmpty)
        #expect(token.isFinished)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func aReadCanOvertakeAWriteReportedOutsideTheLock() {
        // The documented window: a model that reports a write before taking the lock it stores
        // under. The hook runs the read where another thread's read could run.
        let model = LooselyLockedTrackingCounter()
        let target = ManualTarget()
        let recorder = Recorder<Int>()
        let token = Receptionist.tracking(\.count, of: model).deliver(on: target) { recorder.append($0) }
        model.betweenReportAndStore { target.runAll() }
        model.count = 1
        #expect(recorder.values == [0])  // read before the store
        #expect(target.pendingCount == 0)  // and 1 is not reported again
        model.betweenReportAndStore(nil)
        model.count = 2  // the next change catches up
        target.runAll()
        #expect(recorder.values == [0, 2])
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test(.exitTest) func immediateDeliveryIsRejected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Receptionist.tracking(\.count, of: TrackingCounter()).deliver(on: .immediate) { _ in }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("tracking(_:of:options:).deliver(on:_:) target must run work asynchronously"))
    }
}

/// Tracking on the main actor, with the real main queue.
@Suite struct MainActorTrackedPropertyTests {
    /// Yields the main actor until `condition` holds; gives up after `seconds` (a failure guard).
    ///
    /// Work submitted to the main queue before a yield (such as a tracking's read) runs before the
    /// test continues.
    @MainActor
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    private func settle(seconds: Double = 60, _ condition: @MainActor () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            await Task.yield()
        }
        return true
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func aMainActorModelIsReadAndDeliveredOnTheMainActor() async {
        let model = MainActorTrackingCounter()
        let recorder = MainActorTrackingRecorder<Int>()
        let token = Receptionist.tracking(\.count, of: model, options: .initial).deliver(on: .mainActor) { value in
            MainActor.preconditionIsolated()
            recorder.values.append(value)
        }
        #expect(await settle { recorder.values == [0] })
        model.count = 1
        #expect(await settle { recorder.values == [0, 1] })
        model.count = 2
        model.count = 3  // before the main queue runs the read: coalesced
        #expect(await settle { recorder.values.last == 3 })
        #expect(recorder.values == [0, 1, 3])
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func theTaskBlockMayWriteTheMainActorModel() async {
        let model = MainActorTrackingCounter()
        let recorder = MainActorTrackingRecorder<Int>()
        let token = Receptionist.tracking(\.count, of: model, options: .initial).deliver(on: .mainActor) { value in
            recorder.values.append(value)
            if value < 5 { model.count += 1 }
        }
        #expect(await settle { recorder.values.last == 5 })
        #expect(recorder.values == [0, 1, 2, 3, 4, 5])
        token.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func aModelThatIsNotSendableCanBeTrackedOnTheMainActor() async {
        var model: PlainTrackingCounter? = PlainTrackingCounter()
        let recorder = MainActorTrackingRecorder<Int>()
        let token = Receptionist.tracking(\.count, of: model!).deliver(on: .mainActor) { recorder.values.append($0) }
        model!.count = 1
        #expect(await settle { recorder.values == [1] })
        model = nil
        #expect(await settle { token.isFinished })
        #expect(recorder.values == [1])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func cancelOnTheMainActorStopsDelivery() async {
        let lifetimes = LifetimeCounter()
        let witness = LifetimeWitness(lifetimes)
        let model = MainActorTrackingCounter()
        let recorder = MainActorTrackingRecorder<Int>()
        let token = Receptionist.tracking(\.count, of: model).deliver(on: .mainActor) { [witness] value in
            witness.touch()
            recorder.values.append(value)
        }
        _ = consume witness
        model.count = 1
        token.cancel()
        #expect(lifetimes.deinitialized == 1)
        model.count = 2
        // A round trip through the main queue: anything the tracking submitted has run by then.
        let marker = MainActorTrackingRecorder<Bool>()
        DispatchQueue.main.async { MainActor.assumeIsolated { marker.values.append(true) } }
        #expect(await settle { marker.values == [true] })
        #expect(recorder.values.isEmpty)
        #expect(token.isCancelled)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func theMainActorModelsDeallocationFinishesTheTracking() async {
        let modelLifetimes = LifetimeCounter()
        var model: MainActorTrackingCounter? = MainActorTrackingCounter(lifetime: LifetimeWitness(modelLifetimes))
        let token = Receptionist.tracking(\.count, of: model!).deliver(on: .mainActor) { _ in }
        model = nil
        #expect(modelLifetimes.deinitialized == 1)
        #expect(await settle { token.isFinished })
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor @Test func aSendableModelOnTheMainActorUsesTheOverloadThatAnyTargetAccepts() async {
        let model = TrackingCounter()
        let tracked: Pipeline<TrackedProperty<TrackingCounter, Int>, Int> = Receptionist.tracking(\.count, of: model)
        let recorder = MainActorTrackingRecorder<Int>()
        let token = tracked.deliver(on: .mainActor) { recorder.values.append($0) }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                model.count = 42  // written off the main actor, read on it
                continuation.resume()
            }
        }
        #expect(await settle { recorder.values.last == 42 })
        token.cancel()
    }
}
