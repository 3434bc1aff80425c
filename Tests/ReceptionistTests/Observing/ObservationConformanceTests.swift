import Dispatch
import Foundation
import Observation
import Testing

@testable import Receptionist

/// A model with two `@Observed` properties, for the Observation tests.
final class Plane: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var x = 0
    @Observed var y = 0
}

/// Counts the Observation calls a property gets, and the library's locks held during each.
final class CountingNotifier: ObservationNotifier {
    struct Counts: Equatable {
        var accesses = 0
        var willSets = 0
        var didSets = 0
        var locksHeld = 0
    }

    private let counts = Locked<Counts>(uncounted: Counts())
    /// Runs in `willSet`, after it is counted.
    private let onWillSet: @Sendable () -> Void

    init(onWillSet: @escaping @Sendable () -> Void = {}) {
        self.onWillSet = onWillSet
    }

    var value: Counts { counts.withLock { $0 } }

    func access(_ model: AnyObject) { count { $0.accesses += 1 } }
    func willSet(_ model: AnyObject) {
        count { $0.willSets += 1 }
        onWillSet()
    }
    func didSet(_ model: AnyObject) { count { $0.didSets += 1 } }

    private func count(_ change: @Sendable (inout Counts) -> Void) {
        let held = LockDiagnostics.locksHeldByCurrentThread
        counts.withLock { counts in
            change(&counts)
            counts.locksHeld += held
        }
    }

    /// Replaces the notifier of `keyPath`'s storage (a clear-box hook: the counts are exact,
    /// with no registrar in between).
    static func install<Value: Sendable>(
        on model: Plane,
        _ keyPath: ReferenceWritableKeyPath<Plane, Value>,
        onWillSet: @escaping @Sendable () -> Void = {}
    ) -> CountingNotifier {
        let notifier = CountingNotifier(onWillSet: onWillSet)
        let storage = model.observedStorage(for: keyPath, in: "test", parameter: "keyPath")
        model.registry.withLock { lock, _ in storage.setObservationNotifier(notifier, lock) }
        return notifier
    }
}

/// True the first time it is taken, then false.
final class Once: Sendable {
    private let taken = Locked<Bool>(uncounted: false)

    func take() -> Bool {
        taken.withLock { taken in
            defer { taken = true }
            return !taken
        }
    }
}

/// What the `onChange` handlers of one test saw: for each call, the library's locks the calling
/// thread held and the value of the tracked property at that moment (read without tracking).
typealias ChangeLog = Recorder<(locksHeld: Int, value: Int)>

/// Swift Testing does not accept `@available` on a suite, so each test that uses Observation is
/// marked: on an older OS it is skipped.
@Suite struct ObservationConformanceTests {
    /// `withObservationTracking { model.x }`, its `onChange` logged.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    private func track(_ model: Plane, _ log: ChangeLog) {
        withObservationTracking {
            _ = model.x
        } onChange: {
            log.append((LockDiagnostics.locksHeldByCurrentThread, model.$x.value))
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func aModelIsObservable() {
        func isObservable(_ value: some Observable) -> Bool { true }
        #expect(isObservable(Plane()))
        #expect(isObservable(ObservableValue(0)))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theSetterFiresOnChangeOnceBeforeTheWriteWithNoLockHeld() {
        let model = Plane()
        let log = ChangeLog()
        track(model, log)
        model.x = 1
        model.x = 2
        // Once (tracking is one-shot), on the writer's thread, before the write (willSet).
        #expect(log.values.map(\.value) == [0])
        #expect(log.values.map(\.locksHeld) == [0])
        #expect(model.x == 2)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func anAtomicUpdateOfThePropertyFiresOnChangeOnce() {
        let model = Plane()
        let log = ChangeLog()
        track(model, log)
        model.$x.update { $0 += 5 }
        #expect(log.values.map(\.value) == [0])
        #expect(log.values.map(\.locksHeld) == [0])
        #expect(model.x == 5)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func aTransactionThatWritesThePropertyFiresOnChangeOnceBeforeItsWrites() {
        let model = Plane()
        let log = ChangeLog()
        withObservationTracking {
            _ = model.x
            _ = model.y
        } onChange: {
            log.append((LockDiagnostics.locksHeldByCurrentThread, model.$x.value * 10 + model.$y.value))
        }
        model.update {
            $0.x = 1
            $0.y = 2
        }
        // Before the transaction's writes: neither is applied yet.
        #expect(log.values.map(\.value) == [0])
        #expect(log.values.map(\.locksHeld) == [0])
        #expect(model.x == 1 && model.y == 2)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func writesToAPropertyThatWasNotReadDoNotFireOnChange() {
        let model = Plane()
        _ = model.y  // y too has a notifier now: it is the tracking that must tell them apart
        let log = ChangeLog()
        track(model, log)
        model.y = 1
        model.$y.update { $0 += 1 }
        model.update { $0.y = 3 }
        #expect(log.values.isEmpty)
        model.x = 1
        #expect(log.values.count == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func theBoxValueIsObservedTheSameWay() {
        let box = ObservableValue(0)
        let log = ChangeLog()
        func track() {
            withObservationTracking {
                _ = box.value
            } onChange: {
                log.append((LockDiagnostics.locksHeldByCurrentThread, box.registry.read(box.storage)))
            }
        }
        track()
        box.value = 1
        track()
        box.update { $0 += 1 }
        #expect(log.values.map(\.value) == [0, 1])
        #expect(log.values.map(\.locksHeld) == [0, 0])
        #expect(box.value == 2)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func receptionistsGetEveryChangeInOrderAlongsideTracking() {
        let model = Plane()
        let delivered = Recorder<Int>()
        let token = model.receptionist(for: \.x).deliver(on: .immediate) { delivered.append($0.newValue) }
        let log = ChangeLog()
        /// Re-armed by each onChange, which may itself read and write the model.
        @Sendable func arm() {
            withObservationTracking {
                _ = model.x
            } onChange: {
                log.append((LockDiagnostics.locksHeldByCurrentThread, model.$x.value))
                arm()
            }
        }
        arm()
        for value in 1...100 {
            switch value % 3 {
            case 0: model.x = value
            case 1: model.$x.update { $0 = value }
            default: model.update { $0.x = value }
            }
        }
        #expect(delivered.values == Array(1...100))
        #expect(log.values.map(\.value) == Array(0..<100))
        #expect(log.values.allSatisfy { $0.locksHeld == 0 })
        token.finish()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func aHandlerMayWriteTheModelItIsNotifiedOf() {
        let model = Plane()
        let log = ChangeLog()
        withObservationTracking {
            _ = model.x
        } onChange: {
            log.append((LockDiagnostics.locksHeldByCurrentThread, model.$x.value))
            model.y += 1  // re-entrant: no lock is held
        }
        // The transaction read y, which the handler writes on this very thread between the
        // transaction's willSet and its commit: the transaction runs again, it does not stop.
        var runs = 0
        model.update { model in
            runs += 1
            model.x = model.y + 10
        }
        #expect(runs == 2)
        #expect(model.y == 1 && model.x == 11)
        #expect(log.values.count == 1)
    }

    @Test func aRetriedTransactionSendsOneWillSetAndOneDidSetPerProperty() {
        let model = Plane()
        let other = DispatchQueue(label: "other writer")
        let firstWillSet = Once()
        // On the first willSet, another thread writes y, which the transaction read: it must
        // run again, and Observation must not be told twice.
        let x = CountingNotifier.install(on: model, \.x) {
            if firstWillSet.take() {
                other.sync { model.y = 100 }
            }
        }
        let y = CountingNotifier.install(on: model, \.y)
        var runs = 0
        model.update { model in
            runs += 1
            model.x = model.y + 1
        }
        #expect(runs == 2)
        #expect(model.$x.value == 101)
        #expect(x.value == CountingNotifier.Counts(accesses: 0, willSets: 1, didSets: 1, locksHeld: 0))
        // y: the other thread's write only.
        #expect(y.value == CountingNotifier.Counts(accesses: 0, willSets: 1, didSets: 1, locksHeld: 0))
    }

    @Test func aRetriedUpdateSendsOneWillSetAndOneDidSet() {
        let model = Plane()
        let other = DispatchQueue(label: "other writer")
        let firstWillSet = Once()
        let x = CountingNotifier.install(on: model, \.x) {
            if firstWillSet.take() {
                other.sync { model.$x.update { $0 = 100 } }
            }
        }
        var runs = 0
        model.$x.update { value in
            runs += 1
            value += 1
        }
        #expect(runs == 2)
        #expect(model.$x.value == 101)
        // Ours and the other thread's: one willSet and one didSet each.
        #expect(x.value == CountingNotifier.Counts(accesses: 0, willSets: 2, didSets: 2, locksHeld: 0))
    }

    @Test func aThrowingTransactionStillPairsItsWillSet() {
        struct Failure: Error {}
        let model = Plane()
        let other = DispatchQueue(label: "other writer")
        let firstWillSet = Once()
        let x = CountingNotifier.install(on: model, \.x) {
            if firstWillSet.take() {
                other.sync { model.y = 100 }
            }
        }
        var runs = 0
        #expect(throws: Failure.self) {
            try model.update { model in
                runs += 1
                if runs == 2 { throw Failure() }
                model.x = model.y + 1
            }
        }
        #expect(model.$x.value == 0)
        #expect(x.value == CountingNotifier.Counts(accesses: 0, willSets: 1, didSets: 1, locksHeld: 0))
    }

    @Test func getterReadsReportAccessesButTheLibrarysOwnReadsDoNot() {
        let model = Plane()
        let x = CountingNotifier.install(on: model, \.x)
        _ = model.x
        _ = model.$x.value
        model.update { _ = $0.x }
        let token = model.receptionist(for: \.x, options: .initial).deliver(on: .immediate) { _ in }
        #expect(x.value.accesses == 1)
        token.finish()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func aPropertyNeverReadThroughItsGetterSkipsObservation() {
        let model = Plane()
        let token = model.receptionist(for: \.x).deliver(on: .immediate) { _ in }
        model.x = 1
        model.update { $0.x = 2 }
        let storage = model.observedStorage(for: \.x, in: "test", parameter: "keyPath")
        #expect(
            model.registry.withLock { lock, state in
                state.observationRegistrar == nil && storage.observationNotifier(lock) == nil
            })
        _ = model.x
        #expect(
            model.registry.withLock { lock, state in
                state.observationRegistrar != nil && storage.observationNotifier(lock) != nil
            })
        token.finish()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test func concurrentWritersLoseNoChangeAndTrackingStaysArmed() async {
        let writers = 4
        let perWriter = eventsPerThread(10_000, threads: writers)
        let outcome = await onOwnThread { () -> (OrderChecker.Report, fired: Int, locksHeld: Int, last: Bool) in
            let model = Plane()
            let checker = OrderChecker()
            let delivered = DispatchSemaphore(value: 0)
            let total = writers * perWriter + 1
            let count = Locked<Int>(uncounted: 0)
            let token = model.receptionist(for: \.x).deliver(on: DispatchQueue(label: "consumer")) { change in
                checker.record(change.newValue)
                let received = count.withLock { count in
                    count += 1
                    return count
                }
                if received == total { delivered.signal() }
            }
            let fired = Locked<(count: Int, locksHeld: Int)>(uncounted: (0, 0))
            @Sendable func arm() {
                // Each arming fires once: should Observation call one tracking's handler from two
                // writers at once, the chain must not fork.
                let once = Once()
                withObservationTracking {
                    _ = model.x
                } onChange: {
                    guard once.take() else { return }
                    let held = LockDiagnostics.locksHeldByCurrentThread
                    fired.withLock { $0 = ($0.count + 1, $0.locksHeld + held) }
                    arm()
                }
            }
            arm()
            onThreads(writers) { writer in
                for sequence in 0..<perWriter {
                    let value = stamp(writer, sequence)
                    switch sequence % 3 {
                    case 0: model.x = value
                    case 1: model.$x.update { $0 = value }
                    default: model.update { $0.x = value }
                    }
                }
            }
            // Tracking is still armed: the next write fires it.
            let before = fired.withLock { $0.count }
            model.x = stamp(writers, 0)
            let last = fired.withLock { $0.count } == before + 1
            let arrived = wait(delivered, seconds: 120)
            token.finish()
            var report = checker.report
            if !arrived { report.received = -report.received }
            let (firedCount, held) = fired.withLock { $0 }
            return (report, firedCount, held, last)
        }
        #expect(outcome.0 == OrderChecker.Report(received: writers * perWriter + 1))
        #expect(outcome.fired >= 1 && outcome.fired <= writers * perWriter + 1)
        #expect(outcome.locksHeld == 0)
        #expect(outcome.last, "the tracking re-armed by the handlers must still fire")
    }

    /// `Observations` over an `@Observed` property follows a writer thread, in order, to its final
    /// value. Observation itself can miss a write from another thread (one that lands between an
    /// emission's read and the tracking it installs, or a read that lands between `willSet` and
    /// the store: `ObservationsFinalValueTrials` forces both, and shows them for a plain
    /// `@Observable` class too), so the final value is written again until it arrives: what must
    /// hold is that the iteration never stalls and never goes back.
    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    @Test func observationsFollowsAWriterThreadToItsFinalValue() async {
        let model = Plane()
        let final = 1_000
        let started = DispatchSemaphore(value: 0)
        let seen = Recorder<Int>()
        let task = Task.detached {
            for await value in Observations({ model.x }) {
                if seen.count == 0 { started.signal() }
                seen.append(value)
                if value == final { break }
            }
        }
        let finished = await onOwnThread { () -> Bool in
            guard wait(started, seconds: 30) else { return false }
            for value in 1...final {
                if value.isMultiple(of: 2) { model.x = value } else { model.$x.update { $0 = value } }
            }
            // Each write of the final value again is a new change (a `willSet`) for the iteration.
            for _ in 0..<60 {
                if waitUntil(seconds: 0.5, { seen.values.last == final }) { return true }
                model.x = final
            }
            return false
        }
        task.cancel()
        let values = seen.values
        #expect(finished)
        #expect(values.last == final)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "in write order (repeats allowed)")
    }
}
