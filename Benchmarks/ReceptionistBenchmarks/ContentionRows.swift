// The contention section: the same rows with 1, 2, 4, 8, 16 and 64 producer threads on however
// many cores the machine has, so that a lock that collapses when threads outnumber cores shows as
// a row whose cost per change grows with P. Library rows sit beside `DispatchQueue.async` per
// change, the hand-written floors (a buffer and a drain per burst, over `Synchronization.Mutex` as
// a Swift user would write it on Linux, and over `pthread_mutex_t` as NIO's lock is), and the lock
// candidates themselves, timed bare.

import Dispatch
import Foundation
import Receptionist

#if os(Linux)
import CReceptionistSync
import Glibc
import Synchronization
#endif

/// The producer counts of the contention section.
let contentionProducers = [1, 2, 4, 8, 16, 64]

/// The library rows whose cost at 64 producers must stay within ``collapseLimit`` of their cost
/// at one (`--fail-on-collapse`).
let collapseCheckedKeys = [
    "receptionist-dispatch", "receptionist-actor", "observed-lossless", "coalesce", "staged-map",
    "observer-set-notify",
]

/// The receptionist rows that must also cost at most ``asyncLimit`` times `DispatchQueue.async`
/// per change at every P. Not `ObserverSet.notify`: a notification takes the set's lock for its snapshot and
/// the observer's receptionist's lock, and retains what the snapshot shares with every other
/// notifying thread, where `DispatchQueue.async` is one atomic exchange on a lock-free queue; it
/// stays close to `DispatchQueue.async` as notifying threads are added, a little above it
/// (Benchmarks/README.md, "Contention").
let asyncBoundedKeys = ["receptionist-dispatch", "receptionist-actor", "observed-lossless", "coalesce", "staged-map"]

/// P = 64 may cost at most this many times P = 1, per change.
let collapseLimit = 3.0

/// A receptionist row may cost at most this many times `DispatchQueue.async` per change at the
/// same P. Not 1: several rows cost about what `DispatchQueue.async` costs at some P (the lossless
/// `@Observed` row from 8 producers up, the coalescing and staged rows at one, where a consumer
/// that catches up makes the next change pay a thread wake-up), so on a shared 2-core VM either
/// can come out ahead in a run; a collapse costs tens of times more.
let asyncLimit = 2.0

extension LibraryRows {
    /// Every producer notifies an `ObserverSet` of one observer, which gets its messages on a
    /// serial queue: the message carries the change, so the observer checks per-producer order.
    static func observerSetNotify(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let observer = NotifiedObserver(consumer)
        let set = ObserverSet<NotifiedObserver>()
        set.add(observer, on: CountingTarget(DispatchQueue(label: "benchmark.consumer"), hops))
        let refused = Protected(0)
        var measurement = runProducers(spec, consumer: consumer) { event in
            if set.notify({ $0.receive(event) }) != 1 { refused.withLock { $0 += 1 } }
        }
        measurement.hops = hops.value
        measurement.check(refused.withLock { $0 } == 0, "\(refused.withLock { $0 }) notifications reached no one")
        withExtendedLifetime(observer) {}
        set.finish()
        return measurement
    }

    /// `map { $0 }` into an unbounded buffer to a serial queue: the stages' intake and drain
    /// under contention.
    static func stagedMap(_ spec: RunSpec) -> Measurement {
        unboundedMap(spec)
    }
}

/// The observer of ``LibraryRows/observerSetNotify(_:)``.
final class NotifiedObserver: Sendable {
    let consumer: Consumer

    init(_ consumer: Consumer) {
        self.consumer = consumer
    }

    func receive(_ event: Event) { consumer.receive(event) }
}

#if os(Linux)
extension Baselines {
    /// The lossless floor over `pthread_mutex_t` (as swift-nio's `NIOLock`), where
    /// ``floor(_:)`` uses `Synchronization.Mutex`: what a user who avoids `Mutex` on Linux writes.
    static func pthreadFloor(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let floor = LosslessFloor<PthreadBox<LosslessFloorState>>(
            queue: DispatchQueue(label: "benchmark.consumer"), hops: hops
        ) {
            consumer.receive($0)
        }
        var measurement = runProducers(spec, consumer: consumer) { floor.send($0) }
        measurement.hops = hops.value
        return measurement
    }
}

/// ``LockedBox`` over a `pthread_mutex_t` in its own allocation (as swift-nio's `NIOLock`).
final class PthreadBox<Value: Sendable>: LockedBox, @unchecked Sendable {
    // @unchecked: the value is only touched with the lock held.
    private let lock = BareLock(.pthread)
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    @inline(__always)
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        var result: Result?
        lock.withLock { result = body(&value) }
        return result.unsafelyUnwrapped
    }
}

/// The lock candidates of the library's Linux default, bare: each in its own allocation (none
/// may move), locked and unlocked directly.
final class BareLock: @unchecked Sendable {
    // @unchecked: the primitives are only used through their own lock and unlock functions.
    enum Kind: String, CaseIterable, Sendable {
        /// `Synchronization.Mutex` (on Linux a priority-inheritance futex).
        case mutex
        /// `pthread_mutex_t`, default type.
        case pthread
        /// glibc's `PTHREAD_MUTEX_ADAPTIVE_NP`: spins a while before it sleeps.
        case pthreadAdaptive = "pthread-adaptive"
        /// `receptionist_futex_mutex`, the library's Linux default.
        case futex

        var title: String {
            switch self {
            case .mutex: "Synchronization.Mutex"
            case .pthread: "pthread_mutex_t"
            case .pthreadAdaptive: "pthread_mutex_t, ADAPTIVE_NP"
            case .futex: "futex word + spin (the library's)"
            }
        }
    }

    let kind: Kind
    private let pthread: UnsafeMutablePointer<pthread_mutex_t>
    private let futex: UnsafeMutablePointer<receptionist_futex_mutex>
    private let mutex = Mutex(())

    init(_ kind: Kind) {
        self.kind = kind
        pthread = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        if kind == .pthreadAdaptive {
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        }
        pthread_mutex_init(pthread, &attributes)
        pthread_mutexattr_destroy(&attributes)
        futex = .allocate(capacity: 1)
        receptionist_futex_mutex_init(futex)
    }

    deinit {
        pthread_mutex_destroy(pthread)
        pthread.deallocate()
        futex.deallocate()
    }

    /// Runs `body` with the lock held.
    @inline(__always)
    func withLock(_ body: () -> Void) {
        switch kind {
        case .mutex:
            mutex.withLock { _ in body() }
        case .pthread, .pthreadAdaptive:
            pthread_mutex_lock(pthread)
            body()
            pthread_mutex_unlock(pthread)
        case .futex:
            receptionist_futex_mutex_lock(futex)
            body()
            receptionist_futex_mutex_unlock(futex)
        }
    }
}

enum LockRows {
    /// `spec.producers` threads take the lock `spec.changes` times in all: each critical section
    /// increments a counter and writes a slot of a small ring (a buffer append's worth of work),
    /// with a few tens of nanoseconds of work between acquisitions (making the next change).
    /// Checked: the counter counts every acquisition, and the ring holds what its last writers
    /// put there.
    static func bare(_ kind: BareLock.Kind) -> @Sendable (RunSpec) -> Measurement {
        { spec in
            let lock = BareLock(kind)
            let shared = SharedCounter()
            let ready = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            let usage = ContextSwitches.now()
            for index in 0..<spec.producers {
                let count = spec.changes(of: index)
                let thread = Thread {
                    ready.signal()
                    go.wait()
                    var work = UInt64(index) &+ 1
                    for _ in 0..<count {
                        lock.withLock { shared.bump(work) }
                        for _ in 0..<16 { work = work &* 6_364_136_223_846_793_005 &+ 1 }
                    }
                    shared.sink(work)
                    finished.signal()
                }
                thread.stackSize = 1 << 18
                thread.start()
            }
            for _ in 0..<spec.producers { ready.wait() }
            let start = now()
            for _ in 0..<spec.producers { go.signal() }
            for _ in 0..<spec.producers { finished.wait() }
            let elapsed = now() &- start
            var measurement = Measurement(
                changes: spec.changes, elapsedNanos: elapsed, sendNanos: elapsed, latencies: [],
                peakGrowthBytes: nil, hops: nil, deliveries: spec.changes, failures: [])
            measurement.contextSwitches = ContextSwitches.since(usage)
            var counted = 0
            lock.withLock { counted = shared.count }
            measurement.check(counted == spec.changes, "the lock let \(spec.changes - counted) increments be lost")
            return measurement
        }
    }
}

/// What the bare lock rows protect: a counter and a ring of 64 slots.
final class SharedCounter: @unchecked Sendable {
    // @unchecked: only touched with the row's lock held (and `sink` with none: it is a relaxed
    // accumulator that keeps the work between acquisitions from being optimised away).
    private(set) var count = 0
    private var ring = [UInt64](repeating: 0, count: 64)
    private let total = Atomic<UInt64>(0)

    @inline(__always)
    func bump(_ value: UInt64) {
        ring[count & 63] = value
        count &+= 1
    }

    func sink(_ value: UInt64) {
        total.wrappingAdd(value, ordering: .relaxed)
    }
}

#endif

/// Voluntary and involuntary context switches of the whole process (`getrusage`).
enum ContextSwitches {
    static func now() -> Int {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return Int(usage.ru_nvcsw) + Int(usage.ru_nivcsw)
    }

    static func since(_ start: Int) -> Int { now() - start }
}

/// The contention section's rows, for every producer count.
func contentionScenarios(_ changes: Int, makeSpec: (Int, Int) -> RunSpec) -> [Scenario] {
    var rows: [Scenario] = []
    for producers in contentionProducers {
        let spec = makeSpec(producers, changes)
        func row(_ key: String, _ name: String, _ kind: Kind, _ run: @escaping @Sendable (RunSpec) -> Measurement) {
            rows.append(Scenario(key: key, name: name, kind: kind, section: .contention, spec: spec, run: run))
        }
        row("receptionist-dispatch", "receptionist → DispatchQueue", .library, LibraryRows.receptionistDispatch)
        row("receptionist-actor", "receptionist → actor", .library, LibraryRows.receptionistActor)
        row("observed-lossless", "@Observed → DispatchQueue (lossless)", .library, LibraryRows.observedLossless)
        row("coalesce", "@Observed + coalesce() → DispatchQueue", .library, LibraryRows.coalesceObserved)
        row("staged-map", "map → DispatchQueue (staged, unbounded)", .library, LibraryRows.stagedMap)
        row(
            "observer-set-notify", "ObserverSet.notify → 1 observer on a DispatchQueue", .library,
            LibraryRows.observerSetNotify)
        row("waiting", "receptionist (waiting 1024) → DispatchQueue", .library, LibraryRows.waitingDispatch)
        row("dispatch-async", "DispatchQueue.async per change", .baseline, Baselines.dispatchAsync)
        row("floor", "floor: Mutex buffer, one drain per burst", .floor, Baselines.floor)
        #if os(Linux)
        row("pthread-floor", "floor: pthread_mutex_t buffer, one drain per burst", .floor, Baselines.pthreadFloor)
        row(
            "waiting-floor-broadcast", "floor: bounded queue (waiting 1024; mutex, array, 2 conds), wakes all",
            .floor, Baselines.boundedFloor(wakesAll: true))
        row(
            "waiting-floor-signal", "floor: bounded queue (waiting 1024; mutex, array, 2 conds), wakes one",
            .floor, Baselines.boundedFloor(wakesAll: false))
        for lock in BareLock.Kind.allCases {
            row("lock-\(lock.rawValue)", "bare lock: \(lock.title)", .baseline, LockRows.bare(lock))
        }
        #endif
    }
    return rows
}
