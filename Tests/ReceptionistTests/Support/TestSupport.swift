import Dispatch
import Foundation
import Testing

@testable import Receptionist

#if canImport(Glibc)
import Glibc
#endif

/// A delivery target whose submitted work waits until the test runs it by hand.
///
/// Makes drain behaviour (how many submissions, budget, order, cancel between blocks)
/// deterministic: no threads, no timing.
final class ManualTarget: DeliveryTarget {
    private let queue = Locked<[@Sendable () -> Void]>(uncounted: [])
    private let submissions = AtomicValue<Int>(0)

    func submit(_ work: @escaping @Sendable () -> Void) {
        submissions.add(1, ordering: .relaxed)
        queue.withLock { $0.append(work) }
    }

    /// Work submitted and not yet run.
    var pendingCount: Int { queue.withLock { $0.count } }

    /// Every submission so far.
    var submissionCount: Int { submissions.load(ordering: .relaxed) }

    /// Runs the oldest submitted work item. Returns `false` if there was none.
    @discardableResult
    func runNext() -> Bool {
        let work = queue.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let work else { return false }
        work()
        return true
    }

    /// Runs submitted work, including work submitted meanwhile, until none is left.
    ///
    /// - Returns: how many work items ran.
    @discardableResult
    func runAll() -> Int {
        var count = 0
        while runNext() { count += 1 }
        return count
    }
}

/// A thread-safe list of what task blocks saw.
final class Recorder<Value: Sendable>: Sendable {
    private let storage = Locked<[Value]>(uncounted: [])

    func append(_ value: Value) {
        storage.withLock { $0.append(value) }
    }

    var values: [Value] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

/// Counts deinitialisations of ``LifetimeWitness`` objects.
final class LifetimeCounter: Sendable {
    private let count = AtomicValue<Int>(0)
    var deinitialized: Int { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .releasing) }
}

/// An object whose deinit is counted: capture it in a closure to see the closure released.
final class LifetimeWitness: Sendable {
    let counter: LifetimeCounter
    init(_ counter: LifetimeCounter) { self.counter = counter }
    deinit { counter.increment() }
    func touch() {}
}

/// Waits for `semaphore`, at most `seconds` (a failure guard, never a timing assumption).
func wait(_ semaphore: DispatchSemaphore, seconds: Double = 120) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}

/// How long a helper that waits for threads or a queue gives them before it fails the test: a
/// failure guard (a lost wake-up or a deadlock would otherwise hang CI until its time limit),
/// never a timing assumption; generous, since the stress suites also run under ThreadSanitizer
/// on a shared 2-core machine.
let watchdogSeconds: Double = 300

/// Runs `body(index)` on `count` new threads at once and returns when all have finished.
///
/// The threads start together (a barrier) to maximise interleaving. A watchdog: threads that
/// have not finished after `seconds` (a lost wake-up, a deadlock) fail the calling test, named,
/// and are left blocked, instead of hanging the run.
func onThreads(
    _ count: Int,
    seconds: Double = watchdogSeconds,
    caller: String = #function,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Int) -> Void
) {
    let started = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    for index in 0..<count {
        let thread = Thread {
            started.signal()
            go.wait()
            body(index)
            finished.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { started.wait() }
    for _ in 0..<count { go.signal() }
    let deadline = DispatchTime.now() + seconds
    var done = 0
    while done < count, finished.wait(timeout: deadline) == .success { done += 1 }
    if done < count {
        Issue.record(
            Comment(
                rawValue: "\(caller): \(count - done) of \(count) threads did not finish within \(seconds) s "
                    + "(a lost wake-up or a deadlock); they are left blocked"),
            sourceLocation: sourceLocation)
    }
}

/// Runs `body` on a thread of its own and returns its result, so that long CPU-bound test work
/// leaves the cooperative pool (two threads on a 2-core machine) to the async tests and actor
/// deliveries that run meanwhile.
///
/// A watchdog: if `body` has not returned after `seconds`, there is no result to go on with, so
/// it stops the test process with a message naming the caller, instead of hanging the run.
func onOwnThread<Result: Sendable>(
    seconds: Double = watchdogSeconds,
    caller: String = #function,
    fileID: String = #fileID,
    line: Int = #line,
    _ body: @escaping @Sendable () -> Result
) async -> Result {
    let returned = DispatchSemaphore(value: 0)
    let watchdog = Thread {
        if !wait(returned, seconds: seconds) {
            fatalError("\(caller) (\(fileID):\(line)): onOwnThread's body did not return within \(seconds) s")
        }
    }
    watchdog.stackSize = 1 << 18
    watchdog.start()
    return await withCheckedContinuation { continuation in
        let thread = Thread {
            let result = body()
            returned.signal()
            continuation.resume(returning: result)
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// Waits until every block already submitted to `queue` has run (for serial queues).
///
/// A watchdog: if they have not run after `seconds` (a drain that never ends), it fails the
/// calling test, named, and returns, instead of hanging the run.
func drainQueue(
    _ queue: DispatchQueue,
    seconds: Double = watchdogSeconds,
    caller: String = #function,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let drained = DispatchSemaphore(value: 0)
    queue.async { drained.signal() }
    if !wait(drained, seconds: seconds) {
        Issue.record(
            Comment(rawValue: "\(caller): the blocks submitted to \(queue.label) did not run within \(seconds) s"),
            sourceLocation: sourceLocation)
    }
}

/// A deterministic pseudo-random generator (SplitMix64), so stress runs are reproducible per seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Waits until `condition` holds, sleeping briefly between checks; gives up after `seconds` (a
/// failure guard). Used only where no event can be waited on, such as a drain finishing after its
/// last task block returned.
///
/// Sleeps rather than spins: on Linux, test threads can be libdispatch workers, and spinning ones
/// were seen to keep libdispatch from running the very drains the test waits for.
func waitUntil(seconds: Double = 120, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + seconds
    while !condition() {
        if DispatchTime.now() > deadline { return false }
        usleep(200)
    }
    return true
}

/// Multiplies the size of stress tests (`RECEPTIONIST_STRESS_SCALE`, default 1).
let stressScale: Double =
    ProcessInfo.processInfo.environment["RECEPTIONIST_STRESS_SCALE"].flatMap(Double.init) ?? 1

/// `base` scaled by ``stressScale``, at least 1.
func scaled(_ base: Int) -> Int {
    max(1, Int(Double(base) * stressScale))
}

/// The events a stress case makes in all, if `RECEPTIONIST_STRESS_EVENTS` sets it (the soak run
/// in the README uses 10 000 000).
let stressEventsPerCase: Int? =
    ProcessInfo.processInfo.environment["RECEPTIONIST_STRESS_EVENTS"].flatMap(Int.init)

/// How many events each of `threads` sending threads makes in a stress case: `base` scaled by
/// ``stressScale``, or the case's share of ``stressEventsPerCase`` when that is set.
func eventsPerThread(_ base: Int, threads: Int = 4) -> Int {
    if let total = stressEventsPerCase { return max(1, total / threads) }
    return scaled(base)
}

/// Encodes a (producer, sequence) pair as one `Int`, so one value identifies one change.
func stamp(_ producer: Int, _ sequence: Int) -> Int {
    producer << 32 | sequence
}

/// Checks, on the consumer side, that events from each producer arrive exactly once and in
/// their sending order; `allowGaps` admits drops (bounded buffers).
final class OrderChecker: Sendable {
    struct Report: Equatable {
        var received = 0
        var duplicatedOrReordered = 0
        var gaps = 0
    }

    private let state: Locked<(next: [Int: Int], report: Report)> = Locked(uncounted: ([:], Report()))

    func record(_ stamped: Int) {
        let producer = stamped >> 32
        let sequence = stamped & 0xFFFF_FFFF
        state.withLock { state in
            state.report.received += 1
            let expected = state.next[producer, default: 0]
            if sequence < expected {
                state.report.duplicatedOrReordered += 1
            } else {
                if sequence > expected { state.report.gaps += 1 }
                state.next[producer] = sequence + 1
            }
        }
    }

    var report: Report { state.withLock { $0.report } }
    func lastSequence(of producer: Int) -> Int? { state.withLock { $0.next[producer].map { $0 - 1 } } }
}

/// A target of the kind users write: each submitted work item runs on a new thread.
struct ThreadTarget: DeliveryTarget {
    /// Whether the calling code runs as work of a `ThreadTarget`.
    @TaskLocal static var isCurrent = false

    func submit(_ work: @escaping @Sendable () -> Void) {
        Thread { Self.$isCurrent.withValue(true) { work() } }.start()
    }
}

extension AtomicValue where Value == Int {
    /// Stores the larger of the current value and `operand`; the value before and after.
    @discardableResult
    func max(_ operand: Int, ordering: AtomicOrdering) -> (oldValue: Int, newValue: Int) {
        var current = load(ordering: .relaxed)
        while current < operand {
            let (exchanged, original) = compareExchange(expected: current, desired: operand, ordering: ordering)
            if exchanged { return (current, operand) }
            current = original
        }
        return (current, current)
    }
}

/// Waits, without blocking a thread, until `condition` holds (a failure guard of `seconds`).
func waitUntilAsync(seconds: Double = 120, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return true
}

/// Runs `body` on a thread of its own and waits for it at most `seconds`: a deadlock shows as a
/// failed expectation (and a thread left blocked), not as a hung test run.
func finishesWithoutDeadlock<Result: Sendable>(seconds: Double = 30, _ body: @escaping @Sendable () -> Result)
    -> Result?
{
    let result = Locked<Result?>(uncounted: nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        let value = body()
        result.withLock { $0 = value }
        done.signal()
    }.start()
    return wait(done, seconds: seconds) ? result.withLock { $0 } : nil
}
