import Dispatch
import Foundation
import Observation
import Testing

@testable import Receptionist

// Issue 35, item 6: does `Observations { model.p0 }` over an `@Observed` property miss the final
// value of a writer on another thread more often than over a plain `@Observable` class? Not a
// test: a measurement, run on demand (`RECEPTIONIST_OBSERVATIONS_TRIALS=N`, trials per case),
// that prints how many trials never saw the final value, for three models in the same build:
//
// - `observed`: an `ObservableModel` with `@Observed var p0` (the library: `willSet` outside the
//   model's lock, the store under it, `didSet` after).
// - `observable`: a plain `@Observable` class whose value sits in a lock (so that the run is free
//   of data races) taken for the store alone, inside `withMutation`: the macro's own setter
//   (`willSet`, store, `didSet`) with the store made atomic. The same structure as the library.
// - `observable-lock-across-willSet`: the benchmark's `ObservationsModel`: the lock is held across
//   `withMutation`, `willSet` included, so that a reader woken by `willSet` blocks until the store.
// - Variants of `observable`, each with one thing the `@Observed` paths do differently:
//   `observable-read-then-access` (the getter reads the value, then reports the access),
//   `observable-slow-store` (~2 µs between `willSet` and the store), and
//   `observable-lock-before-willSet` (an empty critical section before `willSet`, as the setter's
//   check for the notifier).
//
// `RECEPTIONIST_OBSERVATIONS_CASES` and `RECEPTIONIST_OBSERVATIONS_MODELS` (comma-separated raw
// values) pick cases and models; `RECEPTIONIST_OBSERVATIONS_WRITES` sets the writes of the flood
// cases (20 000).
//
// Each case runs the same harness: a detached task iterates `Observations { model.p0 }` and
// records the last value; a thread writes 1...writes; the trial misses if the final value did not
// arrive within the grace period after the last write. Cases:
//
// - `flood`: the writer writes flat out; `slow`: the reader spends ~20 µs per element.
// - `forced-read-then-write`: the reader's first emission reads the value, then waits while the
//   writer writes the final value (`willSet`, store, `didSet`), then returns: the write lands
//   between the emission's read and its tracking being installed.
// - `forced-read-in-willSet`: the final write stops right after `willSet` (which wakes the
//   iteration) until the reader's emission has read the value (at most 1 s), then stores it:
//   the read lands between `willSet` and the store.

/// The trials' `@Observed` model.
final class TrialModel: ObservableModel, @unchecked Sendable {
    // @unchecked: every stored property is an @Observed.
    @Observed var p0 = 0
}

/// Which model a trial runs over.
enum TrialModelKind: String, CaseIterable, Sendable {
    case observed
    case observable
    case observableLockAcrossWillSet = "observable-lock-across-willSet"
    /// The plain control, its getter reading the value before it reports the access, as the
    /// `@Observed` getter does.
    case observableReadThenAccess = "observable-read-then-access"
    /// The plain control, with ~2 µs of work between `willSet` and the store.
    case observableSlowStore = "observable-slow-store"
    /// The plain control, taking its lock once before `willSet` too (an empty critical
    /// section), as the `@Observed` setter does to find the notifier.
    case observableLockBeforeWillSet = "observable-lock-before-willSet"
}

/// A hook run between `willSet` and the store of a write (the forced cases).
final class BetweenWillSetAndStore: Sendable {
    private let hook = Locked<(@Sendable () -> Void)?>(uncounted: nil)

    func set(_ body: (@Sendable () -> Void)?) { hook.withLock { $0 = body } }

    func run() {
        if let body = hook.withLock({ $0 }) { body() }
    }
}

/// The plain `@Observable` control: `willSet` outside the lock, as the macro's setter and the
/// library do.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@Observable final class ControlModel: Sendable {
    @ObservationIgnored private let storage = Locked<Int>(uncounted: 0)
    @ObservationIgnored let between = BetweenWillSetAndStore()
    @ObservationIgnored let readsFirst: Bool
    @ObservationIgnored let storeDelayMicroseconds: Int
    @ObservationIgnored let locksBeforeWillSet: Bool

    init(readsFirst: Bool = false, storeDelayMicroseconds: Int = 0, locksBeforeWillSet: Bool = false) {
        self.readsFirst = readsFirst
        self.storeDelayMicroseconds = storeDelayMicroseconds
        self.locksBeforeWillSet = locksBeforeWillSet
    }

    var p0: Int {
        get {
            if readsFirst {
                let value = storage.withLock { $0 }
                access(keyPath: \.p0)
                return value
            }
            access(keyPath: \.p0)
            return storage.withLock { $0 }
        }
        set {
            if locksBeforeWillSet { storage.withLock { _ in } }
            withMutation(keyPath: \.p0) {
                between.run()
                if storeDelayMicroseconds > 0 { spin(microseconds: storeDelayMicroseconds) }
                storage.withLock { $0 = newValue }
            }
        }
    }
}

/// The control with the lock held across `willSet` (the benchmark's `ObservationsModel`).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@Observable final class LockAcrossWillSetModel: Sendable {
    @ObservationIgnored private let storage = Locked<Int>(uncounted: 0)
    @ObservationIgnored let between = BetweenWillSetAndStore()

    var p0: Int {
        get {
            access(keyPath: \.p0)
            return storage.withLock { $0 }
        }
        set {
            storage.withLock { stored in
                withMutation(keyPath: \.p0) {
                    between.run()
                    stored = newValue
                }
            }
        }
    }
}

/// The `@Observed` property's notifier with a hook after `willSet` (a clear-box hook: the
/// registrar's own `willSet` runs first, so the iteration is woken as by a plain write).
final class HookedNotifier: ObservationNotifier {
    let inner: any ObservationNotifier
    let between: BetweenWillSetAndStore

    init(_ inner: any ObservationNotifier, _ between: BetweenWillSetAndStore) {
        self.inner = inner
        self.between = between
    }

    func access(_ model: AnyObject) { inner.access(model) }
    func willSet(_ model: AnyObject) {
        inner.willSet(model)
        between.run()
    }
    func didSet(_ model: AnyObject) { inner.didSet(model) }
}

/// One model of any kind, behind one interface.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
struct TrialSubject: Sendable {
    let read: @Sendable () -> Int
    let write: @Sendable (Int) -> Void
    let between: BetweenWillSetAndStore

    init(_ kind: TrialModelKind) {
        switch kind {
        case .observed:
            let model = TrialModel()
            let between = BetweenWillSetAndStore()
            // The notifier exists once the property was read through its getter.
            _ = model.p0
            let storage = model.observedStorage(for: \TrialModel.p0, in: "trial", parameter: "keyPath")
            model.registry.withLock { lock, _ in
                let inner = storage.observationNotifier(lock)!
                storage.setObservationNotifier(HookedNotifier(inner, between), lock)
            }
            read = { model.p0 }
            write = { model.p0 = $0 }
            self.between = between
        case .observable:
            let model = ControlModel()
            read = { model.p0 }
            write = { model.p0 = $0 }
            between = model.between
        case .observableReadThenAccess, .observableSlowStore, .observableLockBeforeWillSet:
            let model = ControlModel(
                readsFirst: kind == .observableReadThenAccess,
                storeDelayMicroseconds: kind == .observableSlowStore ? 2 : 0,
                locksBeforeWillSet: kind == .observableLockBeforeWillSet)
            read = { model.p0 }
            write = { model.p0 = $0 }
            between = model.between
        case .observableLockAcrossWillSet:
            let model = LockAcrossWillSetModel()
            read = { model.p0 }
            write = { model.p0 = $0 }
            between = model.between
        }
    }
}

enum TrialCase: String, CaseIterable, Sendable {
    case flood
    case slow
    case forcedReadThenWrite = "forced-read-then-write"
    case forcedReadInWillSet = "forced-read-in-willSet"
}

/// The trials, interleaved: trial i runs every case over every model before trial i + 1.
@Suite struct ObservationsFinalValueTrials {
    static let trials = ProcessInfo.processInfo.environment["RECEPTIONIST_OBSERVATIONS_TRIALS"].flatMap(Int.init)
    static let writes =
        ProcessInfo.processInfo.environment["RECEPTIONIST_OBSERVATIONS_WRITES"].flatMap(Int.init)
        ?? 20_000
    static let graceSeconds = 1.0

    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    @Test(.enabled(if: trials != nil)) func finalValueMisses() async {
        let trials = Self.trials ?? 0
        let cases =
            ProcessInfo.processInfo.environment["RECEPTIONIST_OBSERVATIONS_CASES"].map {
                $0.split(separator: ",").compactMap { TrialCase(rawValue: String($0)) }
            } ?? TrialCase.allCases
        let kinds =
            ProcessInfo.processInfo.environment["RECEPTIONIST_OBSERVATIONS_MODELS"].map {
                $0.split(separator: ",").compactMap { TrialModelKind(rawValue: String($0)) }
            } ?? TrialModelKind.allCases
        var misses: [String: Int] = [:]
        var forcedAchieved: [String: Int] = [:]
        for _ in 0..<trials {
            for trialCase in cases {
                for kind in kinds {
                    let key = "\(trialCase.rawValue) \(kind.rawValue)"
                    let (missed, forced) = await Self.observationsTrial(kind, trialCase)
                    if missed { misses[key, default: 0] += 1 }
                    if forced { forcedAchieved[key, default: 0] += 1 }
                }
            }
        }
        for trialCase in cases {
            for kind in kinds {
                let key = "\(trialCase.rawValue) \(kind.rawValue)"
                var line = "trials: \(key): missed the final value in \(misses[key] ?? 0) of \(trials)"
                if trialCase == .forcedReadInWillSet || trialCase == .forcedReadThenWrite {
                    line += " (interleaving forced in \(forcedAchieved[key] ?? 0))"
                }
                print(line)
            }
        }
    }

    /// One trial; returns whether the final value never arrived, and for the forced cases
    /// whether the interleaving was obtained.
    @available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    static func observationsTrial(_ kind: TrialModelKind, _ trialCase: TrialCase) async -> (missed: Bool, forced: Bool)
    {
        let subject = TrialSubject(kind)
        let final = trialCase == .flood || trialCase == .slow ? writes : 1
        let last = TrialCell(-1)
        let started = DispatchSemaphore(value: 0)
        // The forced cases: the emission signals `read` after reading while `armed`, and waits
        // for `wrote` if `holdAfterRead`.
        let armed = TrialCell(trialCase == .forcedReadThenWrite)
        let read = DispatchSemaphore(value: 0)
        let wrote = DispatchSemaphore(value: 0)
        let holdAfterRead = trialCase == .forcedReadThenWrite
        let slow = trialCase == .slow
        let task = Task.detached {
            var first = true
            for await value in Observations({ () -> Int in
                let value = subject.read()
                if armed.value {
                    armed.store(false)
                    read.signal()
                    if holdAfterRead { _ = wrote.wait(timeout: .now() + 5) }
                }
                return value
            }) {
                last.store(value)
                if first {
                    first = false
                    started.signal()
                }
                if slow { spin(microseconds: 20) }
            }
        }
        let outcome = await onOwnThread { () -> (Bool, Bool) in
            let forced = TrialCell(false)
            switch trialCase {
            case .flood, .slow:
                guard wait(started, seconds: 30) else { return (true, false) }
                for value in 1...final { subject.write(value) }
            case .forcedReadThenWrite:
                // The first emission read 0 and waits: write now, then let it return.
                forced.store(wait(read, seconds: 5))
                subject.write(final)
                wrote.signal()
                guard wait(started, seconds: 30) else { return (true, forced.value) }
            case .forcedReadInWillSet:
                guard wait(started, seconds: 30) else { return (true, false) }
                // `willSet` wakes the iteration; its emission reads before the store (armed
                // first: the emission may run before the hook does).
                armed.store(true)
                subject.between.set { forced.store(wait(read, seconds: 1)) }
                subject.write(final)
                subject.between.set(nil)
            }
            let arrived = waitUntil(seconds: graceSeconds) { last.value == final }
            return (!arrived, forced.value)
        }
        task.cancel()
        return outcome
    }
}

/// A value shared by the trial's threads.
final class TrialCell<Value: Sendable>: Sendable {
    private let cell: Locked<Value>

    init(_ value: Value) {
        cell = Locked(uncounted: value)
    }

    var value: Value { cell.withLock { $0 } }
    func store(_ value: Value) { cell.withLock { $0 = value } }
}

/// Busy-waits about `microseconds` (a slow consumer that keeps its thread).
func spin(microseconds: Int) {
    let end = DispatchTime.now().uptimeNanoseconds + UInt64(microseconds) * 1_000
    while DispatchTime.now().uptimeNanoseconds < end {}
}
