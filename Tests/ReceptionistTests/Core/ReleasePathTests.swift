import Foundation
import Testing

@testable import Receptionist

/// Every path on which the library lets go of a user value (an element, a replaced value, a
/// handler and its captures) lets go of it outside all of its locks: each probe's deinit
/// reports how many of the library's locks its thread held.
@Suite struct ReleasePathTests {
    let log = Recorder<String>()

    func probe(_ name: String) -> ReleaseProbe { ReleaseProbe(name, log: log) }

    /// Every probe released so far reported "outside", and there were `count` of them.
    func expectAllOutside(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(log.count == count, "probes released: \(log.values)", sourceLocation: sourceLocation)
        let under = log.values.filter { !$0.hasSuffix(": outside") }
        #expect(under.isEmpty, "released under a lock: \(under)", sourceLocation: sourceLocation)
    }

    init() throws {
        try #require(LockDiagnostics.isTracking, "the suite runs in a debug build")
    }

    @Test func aReceptionistReleasesDroppedRejectedDiscardedEventsAndItsHandlerOutside() {
        let target = ManualTarget()
        let newest = Receptionist<ReleaseProbe?>(on: target, buffering: .dropNewest(capacity: 1)) { _ in }
        let oldest = Receptionist<ReleaseProbe?>(on: target, buffering: .dropOldest(capacity: 1)) { _ in }
        newest.send(nil)
        newest.send(probe("dropped by dropNewest"))
        oldest.send(probe("evicted by dropOldest"))
        oldest.send(nil)
        let cancelled = {
            let captured = probe("captured by a cancelled handler")
            return Receptionist<ReleaseProbe?>(on: target) { _ in _ = captured }
        }()
        cancelled.send(probe("discarded by cancel"))
        cancelled.cancel()
        cancelled.send(probe("rejected after cancel"))
        let finished = {
            let captured = probe("captured by a finished handler")
            return Receptionist<ReleaseProbe?>(on: target) { _ in _ = captured }
        }()
        finished.send(probe("delivered"))
        finished.finish()
        target.runAll()
        expectAllOutside(7)
    }

    @Test func anInlineReceptionistReleasesWhatItDoesNotKeepOutside() {
        let receptionist = Receptionist<ReleaseProbe?>(on: .immediate, buffering: .dropNewest(capacity: 1)) { _ in }
        receptionist.send(probe("delivered inline"))
        receptionist.cancel()
        receptionist.send(probe("rejected inline"))
        expectAllOutside(2)
    }

    @Test func aBoxReleasesOldValuesAndDetachedObservationsOutside() {
        let box = ObservableValue<ReleaseProbe?>(probe("initial"))
        let target = ManualTarget()
        let token = {
            let captured = probe("captured by a cancelled observation")
            return box.receptionist().deliver(on: target) { _ in _ = captured }
        }()
        box.value = probe("set, then replaced")
        box.update { $0 = nil }
        token.cancel()
        target.runAll()
        expectAllOutside(3)
    }

    @Test func aCoalescedObservationReleasesWhatItFoldsOutside() {
        let box = ObservableValue<ReleaseProbe?>(nil)
        let target = ManualTarget()
        let token = box.receptionist().coalesce().deliver(on: target) { _ in }
        for index in 0..<5 { box.value = probe("written \(index)") }
        box.value = nil
        target.runAll()
        token.cancel()
        expectAllOutside(5)
    }

    @Test func stagesReleaseWhatTheyReplaceOutside() {
        let clock = ManualScheduler()
        let throttled = Receptionist.pipeline(of: ReleaseProbe.self)
            .throttle(for: .milliseconds(10), scheduler: clock, latest: true)
            .deliver(on: .immediate) { _ in }
        let debounced = Receptionist.pipeline(of: ReleaseProbe.self)
            .debounce(for: .milliseconds(10), scheduler: clock)
            .deliver(on: .immediate) { _ in }
        let deduplicated = Receptionist.pipeline(of: ReleaseProbe.self)
            .removeDuplicates { _, _ in false }
            .deliver(on: .immediate) { _ in }
        throttled.send(probe("throttle: leading"))
        throttled.send(probe("throttle: held, then replaced"))
        throttled.send(probe("throttle: trailing"))
        debounced.send(probe("debounce: replaced"))
        debounced.send(probe("debounce: handed on"))
        deduplicated.send(probe("removeDuplicates: replaced"))
        deduplicated.send(probe("removeDuplicates: last"))
        clock.advance(by: .milliseconds(20))
        throttled.cancel()
        debounced.cancel()
        deduplicated.cancel()
        expectAllOutside(7)
    }

    @Test func cancelledScheduledWorkIsReleasedOutside() {
        let clock = ManualScheduler()
        let work = {
            let captured = probe("captured by cancelled work")
            return clock.submit(at: clock.now + .seconds(1)) { _ = captured }
        }()
        expectAllOutside(0)
        work.cancel()  // the work's closure held the only reference
        expectAllOutside(1)
    }

    @Test func theHubAndObserverSetsReleaseHandlersOutside() {
        let hub = Hub()
        let subscription = {
            let captured = probe("captured by a subscriber")
            return hub.subscribe(to: .numbers, on: .immediate) { _ in _ = captured }
        }()
        subscription.cancel()
        let observers = ObserverSet<ReleaseProbe>()
        observers.unhandledMessageHandler = {
            let captured = probe("captured by a replaced unhandled-message handler")
            return { _ in _ = captured }
        }()
        observers.unhandledMessageHandler = nil
        expectAllOutside(2)
    }
}
