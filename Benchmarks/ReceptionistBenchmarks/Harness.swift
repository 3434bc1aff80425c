// The measuring machinery shared by every row: the event, the clock, the consumer that checks
// what it is given, the producer threads, the hop counter and the memory probe.

import Dispatch
import Foundation
import Receptionist

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Clock

/// Monotonic nanoseconds (`clock_gettime`, a vDSO call: no system call).
@inline(__always)
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Busy-waits for `nanoseconds` (the slow consumer's work: sleeping would hand the core to the
/// producers and measure the scheduler instead).
@inline(never)
func spin(nanoseconds: UInt64) {
    let until = now() &+ nanoseconds
    while now() < until {}
}

/// Sleeps for about `nanoseconds` (the paced producers' pause).
func pause(nanoseconds: Int) {
    var request = timespec(tv_sec: 0, tv_nsec: nanoseconds)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 { request = remaining }
}

// MARK: - Event

/// What the producers send: which producer, its sequence number (from 1), and a timestamp on
/// sampled changes (0 otherwise). 16 bytes, a plain value: every row moves the same payload.
struct Event: Sendable, Equatable {
    var value: Int
    var stamp: UInt64

    /// The value an observed property holds before any producer writes it.
    static let initial = Event(value: 0, stamp: 0)

    @inline(__always)
    init(value: Int, stamp: UInt64) {
        self.value = value
        self.stamp = stamp
    }

    @inline(__always)
    init(producer: Int, sequence: Int, stamp: UInt64) {
        self.init(value: producer << 32 | sequence, stamp: stamp)
    }

    @inline(__always) var producer: Int { value >> 32 }
    @inline(__always) var sequence: Int { value & 0xFFFF_FFFF }
}

// MARK: - Run specification

/// How one row is run.
struct RunSpec: Sendable {
    /// Producer threads (1 or 2); the changes are split between them.
    var producers: Int
    /// Changes made in total.
    var changes: Int
    /// Pause after each change (paced rows); 0: as fast as possible.
    var paceNanos: Int = 0
    /// Timestamp every `stampEvery`-th change of each producer (a power of two).
    var stampEvery: Int = 64
    /// Busy work the consumer does per change (the slow consumer of the flood rows).
    var consumerWorkNanos: UInt64 = 0
    /// Harness self-test (`--inject-fault`): producer 0 sends its changes 2 and 3 swapped, which
    /// the consumer's order check must catch.
    var injectFault = false
    /// For a row that cannot see order (one task per change): the injected fault sends producer
    /// 0's change 2 twice and never its change 3, which the consumer's exactly-once check must
    /// catch (a swap is just another order there).
    var faultDuplicates = false

    /// The changes producer `index` makes.
    func changes(of index: Int) -> Int {
        changes / producers + (index < changes % producers ? 1 : 0)
    }

    /// The last value producer `index` sends.
    func lastValue(of index: Int) -> Int {
        Event(producer: index, sequence: changes(of: index), stamp: 0).value
    }
}

// MARK: - Consumer

/// The task block's work, identical in every row: count, check order (and for coalesced
/// deliveries the old/new chain), record sampled latencies, signal when everything arrived.
///
/// `@unchecked Sendable`: it is confined to the delivery context under test, which runs one
/// task block at a time (the property every row is measuring; an overlap would also break the
/// order checks). The benchmark thread reads its state only after `wait` returned, and the
/// semaphore publishes it. The state lives behind raw pointers so that the consumer's own cost
/// stays a few nanoseconds (class properties would pay a dynamic exclusivity check per access).
final class Consumer: @unchecked Sendable {
    enum Order {
        /// Every change exactly once: each producer's sequence numbers go up by one.
        case consecutive
        /// Changes may be skipped (coalesced or dropped): each producer's sequence numbers go up.
        case increasing
        /// Every change exactly once, in any order (one task per change, which Swift does not
        /// order): a bitmap of the changes seen catches a duplicate or a change no producer made;
        /// a change that arrives after a later one of its producer counts in ``outOfOrder``
        /// (recorded, not failed).
        case unordered
    }

    private struct State {
        var count = 0
        var deliveries = 0
        var last = Event.initial
        /// The second value of the last snapshot (snapshot rows).
        var lastRight = Event.initial
        var latencyCount = 0
        /// Unordered rows: changes that arrived after a later change of the same producer.
        var outOfOrder = 0
        var finishedAt: UInt64 = 0
        /// ``HeapAllocations/count`` when the last change arrived.
        var allocationsAtFinish = 0
        var isDone = false
    }

    let spec: RunSpec
    let order: Order
    /// Changes the consumer must account for before it is done.
    let expected: Int
    /// For lossy rows: done once this value is delivered (the newest always survives).
    let finalValue: Int
    private let state: UnsafeMutablePointer<State>
    private let lastSequence: UnsafeMutablePointer<Int>
    /// Unordered rows: one bit per change, producer by producer (`seenStride` bits each).
    private let seen: UnsafeMutablePointer<UInt64>?
    private let seenStride: Int
    private let latencyCapacity: Int
    private let latencyBuffer: UnsafeMutablePointer<UInt64>
    private let errorLog = Protected<[String]>([])
    private let done = DispatchSemaphore(value: 0)

    init(_ spec: RunSpec, order: Order = .consecutive, finalValue: Int? = nil) {
        self.spec = spec
        self.order = order
        self.expected = spec.changes
        self.finalValue = finalValue ?? -1
        state = .allocate(capacity: 1)
        state.initialize(to: State())
        lastSequence = .allocate(capacity: spec.producers)
        lastSequence.initialize(repeating: 0, count: spec.producers)
        seenStride = spec.changes / spec.producers + 2
        if order == .unordered {
            // Zeroed here, before the run: its pages are resident before the memory probe starts.
            let words = (seenStride * spec.producers + 63) / 64
            seen = .allocate(capacity: words)
            seen!.initialize(repeating: 0, count: words)
        } else {
            seen = nil
        }
        latencyCapacity = spec.changes / spec.stampEvery + spec.producers + 16
        latencyBuffer = .allocate(capacity: latencyCapacity)
    }

    deinit {
        state.deallocate()
        lastSequence.deallocate()
        seen?.deallocate()
        latencyBuffer.deallocate()
    }

    var count: Int { state.pointee.count }
    var deliveries: Int { state.pointee.deliveries }
    var last: Event { state.pointee.last }
    var lastRight: Event { state.pointee.lastRight }
    var outOfOrder: Int { state.pointee.outOfOrder }
    var finishedAt: UInt64 { state.pointee.finishedAt }
    var allocationsAtFinish: Int { state.pointee.allocationsAtFinish }
    var latencies: [UInt64] { Array(UnsafeBufferPointer(start: latencyBuffer, count: state.pointee.latencyCount)) }
    var errors: [String] { errorLog.withLock { $0 } }

    /// One change.
    @inline(__always)
    func receive(_ event: Event) {
        state.pointee.deliveries &+= 1
        accept(event)
        state.pointee.count &+= 1
        checkDone()
    }

    /// A batch of changes.
    @inline(__always)
    func receive(batch: [Event]) {
        state.pointee.deliveries &+= 1
        if batch.isEmpty { fail("an empty batch was delivered") }
        for event in batch { accept(event) }
        state.pointee.count &+= batch.count
        checkDone()
    }

    /// A coalesced change: `old` must be the previously delivered value, `new` is the latest,
    /// standing for `changes` changes.
    @inline(__always)
    func receive(old: Event, new: Event, changes: Int) {
        state.pointee.deliveries &+= 1
        if old != state.pointee.last {
            fail(
                "chain broken at delivery \(state.pointee.deliveries): old value \(old.value) after \(state.pointee.last.value)"
            )
        }
        accept(new)
        state.pointee.count &+= changes
        checkDone()
    }

    /// A snapshot of two properties (old and new pairs): the pair must continue the chain (each
    /// old pair is the previous new pair); the first property is checked as by
    /// ``receive(old:new:changes:)``; with `sameHalves`, both properties must hold the same value
    /// in every snapshot (the invariant a transaction writing both keeps).
    @inline(__always)
    func receive(old: (Event, Event), new: (Event, Event), changes: Int, sameHalves: Bool) {
        if old.1 != state.pointee.lastRight {
            fail(
                "snapshot chain broken at delivery \(state.pointee.deliveries + 1): old second value \(old.1.value) after \(state.pointee.lastRight.value)"
            )
        }
        if sameHalves && (new.0 != new.1 || old.0 != old.1) {
            fail(
                "torn snapshot at delivery \(state.pointee.deliveries + 1): (\(old.0.value), \(old.1.value)) → (\(new.0.value), \(new.1.value))"
            )
        }
        state.pointee.lastRight = new.1
        receive(old: old.0, new: new.0, changes: changes)
    }

    @inline(__always)
    private func accept(_ event: Event) {
        let producer = event.producer
        let sequence = event.sequence
        guard producer >= 0, producer < spec.producers else {
            fail("value \(event.value) from no producer")
            return
        }
        let previous = lastSequence[producer]
        switch order {
        case .consecutive where sequence != previous &+ 1, .increasing where sequence <= previous:
            fail("order: producer \(producer) change \(sequence) delivered after \(previous)")
        case .unordered:
            markSeen(producer: producer, sequence: sequence)
            if sequence < previous { state.pointee.outOfOrder &+= 1 }
        default: break
        }
        lastSequence[producer] = order == .unordered ? max(previous, sequence) : sequence
        state.pointee.last = event
        if event.stamp != 0 {
            let index = state.pointee.latencyCount
            if index < latencyCapacity {
                latencyBuffer[index] = now() &- event.stamp
                state.pointee.latencyCount = index &+ 1
            }
        }
        if spec.consumerWorkNanos > 0 { spin(nanoseconds: spec.consumerWorkNanos) }
    }

    /// Unordered rows: fails a change delivered twice, or one its producer never made.
    @inline(__always)
    private func markSeen(producer: Int, sequence: Int) {
        guard let seen, sequence >= 1, sequence <= spec.changes(of: producer) else {
            fail("change \(sequence) of producer \(producer) was never made")
            return
        }
        let bit = producer &* seenStride &+ sequence
        let mask: UInt64 = 1 << UInt64(bit & 63)
        if seen[bit >> 6] & mask != 0 {
            fail("change \(sequence) of producer \(producer) delivered twice")
        }
        seen[bit >> 6] |= mask
    }

    @inline(__always)
    private func checkDone() {
        let count = state.pointee.count
        if count >= expected || state.pointee.last.value == finalValue {
            finishIfNeeded(count)
        }
    }

    @inline(never)
    private func finishIfNeeded(_ count: Int) {
        if count > expected { fail("\(count) changes delivered, \(expected) made") }
        if !state.pointee.isDone {
            state.pointee.isDone = true
            state.pointee.finishedAt = now()
            state.pointee.allocationsAtFinish = HeapAllocations.count
            done.signal()
        }
    }

    @inline(never)
    private func fail(_ message: String) {
        errorLog.withLock { log in
            if log.count < 5 { log.append(message) }
        }
    }

    /// Waits until everything arrived; `false` on timeout.
    func wait(timeoutSeconds: Double) -> Bool {
        done.wait(timeout: .now() + timeoutSeconds) == .success
    }
}

// MARK: - Hop counting

/// Counts the work items a receptionist (or a floor) submits to its target.
final class HopCounter: Sendable {
    private let count = Protected(0)

    @inline(__always)
    func increment() { count.withLock { $0 &+= 1 } }

    var value: Int { count.withLock { $0 } }
}

/// A target that counts submissions and passes them on: how the benchmark sees the receptionist's
/// queue hops without touching the library.
struct CountingTarget<Base: DeliveryTarget>: DeliveryTarget {
    let base: Base
    let hops: HopCounter

    init(_ base: Base, _ hops: HopCounter) {
        self.base = base
        self.hops = hops
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        hops.increment()
        base.submit(work)
    }
}

// MARK: - Memory

/// Peak resident memory of the process, from `/proc/self/status`.
enum Memory {
    /// A `VmRSS`/`VmHWM`-style field in bytes, or `nil` if it cannot be read.
    static func status(_ field: String) -> Int? {
        guard let text = readFile("/proc/self/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.dropFirst(field.count + 1).filter(\.isNumber)
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// Gives freed heap back to the system, so the next row starts from a fair resident size.
    static func trim() {
        #if canImport(Glibc)
        _ = mallocTrim(0)
        #endif
    }

    /// Resets `VmHWM` to the current resident size (Linux `clear_refs` value 5).
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    static func readFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

#if canImport(Glibc)
/// glibc's `malloc_trim` (declared in `<malloc.h>`, which the Glibc module does not export).
@_silgen_name("malloc_trim")
private func mallocTrim(_ pad: Int) -> Int32
#endif

/// Measures how far resident memory rises above where it was when the probe started.
///
/// Two sources, because neither alone sees every peak: `VmHWM` (reset with `clear_refs`) is
/// updated by the kernel only when memory is unmapped, so memory that glibc hands back with
/// `madvise` or by shrinking a thread arena never raises it; a sampler thread reads the resident
/// size from `/proc/self/statm` every millisecond (a read takes a small part of that) and
/// catches those.
final class MemoryProbe: Sendable {
    let residentBefore: Int?
    private let canResetPeak: Bool
    private let peakBefore: Int?
    private let sampledPeak = Protected(0)
    private let stopSampling = Protected(false)
    private let sampler = DispatchSemaphore(value: 0)
    private let sampling = DispatchSemaphore(value: 0)

    private init(residentBefore: Int?, canResetPeak: Bool, peakBefore: Int?) {
        self.residentBefore = residentBefore
        self.canResetPeak = canResetPeak
        self.peakBefore = peakBefore
    }

    static func start() -> MemoryProbe {
        Memory.trim()
        let resident = Memory.status("VmRSS")
        let reset = Memory.resetPeak()
        let probe = MemoryProbe(residentBefore: resident, canResetPeak: reset, peakBefore: Memory.status("VmHWM"))
        let thread = Thread { probe.sample() }
        thread.stackSize = 1 << 18
        thread.start()
        // The sampler thread's start-up (and its buffer) allocates: let it happen before the
        // measured part of the run, so that allocs/change counts only the row's own objects.
        probe.sampling.wait()
        return probe
    }

    private func sample() {
        let fd = open("/proc/self/statm", O_RDONLY)
        var signalledStart = false
        defer {
            if fd >= 0 { close(fd) }
            if !signalledStart { sampling.signal() }
            sampler.signal()
        }
        guard fd >= 0 else { return }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var buffer = [UInt8](repeating: 0, count: 128)
        while !stopSampling.withLock({ $0 }) {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 127, 0) }
            if n > 0 {
                // statm: size resident shared text lib data dt (pages)
                var field = 0
                var value = 0
                for byte in buffer[0..<n] {
                    if byte == UInt8(ascii: " ") {
                        field += 1
                        if field == 2 { break }
                        value = 0
                    } else if field == 1, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                        value = value * 10 + Int(byte - UInt8(ascii: "0"))
                    }
                }
                let resident = value * pageSize
                sampledPeak.withLock { $0 = max($0, resident) }
            }
            if !signalledStart {
                signalledStart = true
                sampling.signal()
            }
            pause(nanoseconds: 1_000_000)
        }
    }

    /// Stops the sampler; the peak growth in bytes (without `clear_refs`, growth beyond the
    /// earlier peak as far as the sampler saw it).
    func peakGrowth() -> Int? {
        stopSampling.withLock { $0 = true }
        sampler.wait()
        let sampled = sampledPeak.withLock { $0 }
        let highWater = Memory.status("VmHWM")
        if canResetPeak, let residentBefore {
            return max(0, max(highWater ?? 0, sampled) - residentBefore)
        }
        guard let reference = peakBefore ?? residentBefore else { return nil }
        return max(0, max(highWater ?? 0, sampled) - reference)
    }
}

// MARK: - Measurement

/// What one run of one row produced.
struct Measurement: Codable, Sendable {
    var changes: Int
    /// From the producers' start to the consumer's last change.
    var elapsedNanos: UInt64
    /// From the producers' start until the last producer returned from its last send.
    var sendNanos: UInt64
    var latencies: [UInt64]
    var peakGrowthBytes: Int?
    var hops: Int?
    var deliveries: Int
    var failures: [String]
    /// Swift heap objects allocated from the producers' release to the consumer's last change
    /// (`nil` without the counter; see HeapAllocations.swift).
    var allocations: Int? = nil
    /// For rows that record it: whether the consumer never saw the observed value's final value
    /// (a correctness failure for the library's rows and the floors, expected now and then from
    /// Observation's `Observations`).
    var finalValueMissed: Bool? = nil
    /// For the `Observations` row: emissions that repeated the value emitted just before.
    var repeatedValues: Int? = nil
    /// For unordered rows: changes that arrived after a later change of the same producer.
    var outOfOrder: Int? = nil
    /// For the waiting-buffer row: how many times a sender waited for room
    /// (``ReceptionistStatistics/waits``).
    var waits: Int? = nil
    /// Voluntary and involuntary context switches of the process during the run (`getrusage`).
    var contextSwitches: Int? = nil
    /// Why this platform could not run the row (it needs an API newer than the package's
    /// deployment floor, see ``Unavailable``); the row has no figures and is reported as skipped.
    var skipped: String? = nil
    /// Flow-control rows: the oldest quote the throttled consumer showed, how long after the
    /// last write the last delivery came, the throttled pipeline's `maxPending`, and the larger of the
    /// throttled and the batching pipeline's `maxPendingBeforeStages`.
    var oldestShownNanos: UInt64? = nil
    var lagAfterLastWriteNanos: UInt64? = nil
    var throttledMaxPending: Int? = nil
    var maxWaitingForStages: Int? = nil
    /// Rows of a producer that must not block (PausingProducerRows in FlowControlRows.swift):
    /// how many times the producer paused (told to by the send's result, or by the floor's
    /// counter), the messages lost (dropped, or never delivered), the longest single `send` and
    /// how many sends took over 1 ms.
    var pauses: Int? = nil
    var lost: Int? = nil
    var maxSendNanos: UInt64? = nil
    var slowSends: Int? = nil
    /// Voluntary context switches of the producer thread outside its pauses (Linux): sends that
    /// gave up the core, waiting for room or a lock.
    var blockedSends: Int? = nil

    var nanosPerChange: Double { Double(elapsedNanos) / Double(max(changes, 1)) }
    var sendNanosPerChange: Double { Double(sendNanos) / Double(max(changes, 1)) }
    var allocationsPerChange: Double? { allocations.map { Double($0) / Double(max(changes, 1)) } }

    mutating func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { failures.append(message()) }
    }

    /// The measurement of a row this platform cannot run: skipped for `reason`, not failed.
    static func skipped(_ spec: RunSpec, _ reason: String) -> Measurement {
        var measurement = Measurement(
            changes: spec.changes, elapsedNanos: 0, sendNanos: 0, latencies: [], peakGrowthBytes: nil, hops: nil,
            deliveries: 0, failures: [])
        measurement.skipped = reason
        return measurement
    }
}

/// Why a row is skipped where the API it measures is newer than the package's deployment floor
/// (macOS 13, iOS 16, tvOS 16, watchOS 9, visionOS 1). Its run function checks `#available` first
/// and returns ``Measurement/skipped(_:_:)`` with one of these.
enum Unavailable {
    static let synchronization =
        "needs Synchronization's Mutex and Atomic (macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2)"
    static let observation = "needs Observation (macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1)"
    static let observations = "needs Observation's Observations (macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26)"
}

/// When the consumer saw the change that ended its run, and ``HeapAllocations/count`` then.
struct Arrival {
    var finishedAt: UInt64
    var allocationCount: Int
}

/// Starts `spec.producers` threads that call `send` for their share of the changes, all released
/// at once; waits for the consumer; returns the timings, latencies, memory growth and the Swift
/// heap objects allocated from the release to the consumer's last change.
///
/// `send` is the only thing that differs between rows on the producing side.
func runProducers(
    _ spec: RunSpec,
    consumer: Consumer,
    send: @escaping @Sendable (Event) -> Void
) -> Measurement {
    runProducers(spec, consumer: consumer, send: send, thenHandOn: {})
}

/// ``runProducers(_:consumer:send:)`` for a row whose pipeline still holds something once the
/// producers returned (a partial batch): `handOn` (a flush, a close) runs then, before the
/// consumer is awaited.
func runProducers(
    _ spec: RunSpec,
    consumer: Consumer,
    send: @escaping @Sendable (Event) -> Void,
    thenHandOn handOn: () -> Void
) -> Measurement {
    runProducers(spec, consumer: consumer, send: send) { timeout in
        handOn()
        guard consumer.wait(timeoutSeconds: timeout) else { return nil }
        return Arrival(finishedAt: consumer.finishedAt, allocationCount: consumer.allocationsAtFinish)
    }
}

/// ``runProducers(_:consumer:send:)`` for a row that decides itself when its consumer is done:
/// `awaitConsumer` runs once every producer returned, gets the timeout, and returns when the
/// consumer saw its last change (`nil` on timeout). The consumer must not run any more when it
/// returns: its state is read right after.
func runProducers(
    _ spec: RunSpec,
    consumer: Consumer,
    send: @escaping @Sendable (Event) -> Void,
    awaitConsumer: (_ timeoutSeconds: Double) -> Arrival?
) -> Measurement {
    let ready = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let lastSendEnd = Protected<UInt64>(0)
    for index in 0..<spec.producers {
        let count = spec.changes(of: index)
        let thread = Thread {
            ready.signal()
            go.wait()
            produce(index: index, count: count, spec: spec, send: send)
            let end = now()
            lastSendEnd.withLock { $0 = max($0, end) }
            finished.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<spec.producers { ready.wait() }
    let memory = MemoryProbe.start()
    let switches = ContextSwitches.now()
    let start = now()
    let allocationsAtStart = HeapAllocations.count
    for _ in 0..<spec.producers { go.signal() }
    for _ in 0..<spec.producers { finished.wait() }
    let timeout = max(120, Double(spec.changes) * Double(spec.consumerWorkNanos + 20_000) / 1e9)
    let arrival = awaitConsumer(timeout)
    let arrived = arrival != nil
    let growth = memory.peakGrowth()
    var measurement = Measurement(
        changes: spec.changes,
        elapsedNanos: arrival.map { $0.finishedAt &- start } ?? (now() &- start),
        sendNanos: lastSendEnd.withLock { $0 } &- start,
        latencies: arrived ? consumer.latencies : [],
        peakGrowthBytes: growth,
        hops: nil,
        deliveries: arrived ? consumer.deliveries : 0,
        failures: [],
        allocations: HeapAllocations.status.isCounting
            ? arrival.map { max(0, $0.allocationCount - allocationsAtStart) } : nil
    )
    measurement.contextSwitches = ContextSwitches.since(switches)
    if arrived {
        measurement.failures += consumer.errors
    } else {
        measurement.failures.append(
            "not everything arrived within \(Int(timeout)) s (the consumer is still waiting for changes)")
    }
    return measurement
}

@inline(never)
private func produce(index: Int, count: Int, spec: RunSpec, send: (Event) -> Void) {
    guard count > 0 else { return }
    let mask = spec.stampEvery - 1
    let pace = spec.paceNanos
    let swapped = spec.injectFault && index == 0 && count >= 3
    for sequence in 1...count {
        let stamp: UInt64 = sequence & mask == 0 ? now() : 0
        let faulty = swapped && (sequence == 2 || sequence == 3)
        let sent = faulty ? (spec.faultDuplicates ? 2 : 5 - sequence) : sequence
        send(Event(producer: index, sequence: sent, stamp: stamp))
        if pace > 0 { pause(nanoseconds: pace) }
    }
}
