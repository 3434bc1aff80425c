// The alternatives a user would write instead of the library, each doing the same consumer work:
// one dispatch per change, one operation per change, an AsyncStream, one task per change onto an
// actor, an AsyncStream consumed in an actor, NotificationCenter, Observation's `Observations`,
// and two hand-written floors (the least a correct trampoline can do).

import Dispatch
import Foundation
import Observation
import Synchronization

enum Baselines {
    /// `queue.async { consume(change) }` for every change, onto a serial queue.
    static func dispatchAsync(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let queue = DispatchQueue(label: "benchmark.consumer")
        var measurement = runProducers(spec, consumer: consumer) { event in
            queue.async { consumer.receive(event) }
        }
        measurement.hops = spec.changes
        return measurement
    }

    /// `DispatchQueue.main.async { consume(change) }` for every change (the main thread runs
    /// `RunLoop.main`), the block on the main actor like the library's main-queue row.
    static func mainAsync(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        var measurement = runProducers(spec, consumer: consumer) { event in
            DispatchQueue.main.async { MainActor.assumeIsolated { consumer.receive(event) } }
        }
        measurement.hops = spec.changes
        return measurement
    }

    /// `operationQueue.addOperation { consume(change) }` for every change, one at a time.
    static func operationQueue(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        var measurement = runProducers(spec, consumer: consumer) { event in
            queue.addOperation { consumer.receive(event) }
        }
        measurement.hops = spec.changes
        return measurement
    }

    /// An unbounded `AsyncStream`; a detached task consumes it with `for await`.
    static func asyncStream(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let task = Task.detached {
            for await event in stream { consumer.receive(event) }
        }
        let measurement = runProducers(spec, consumer: consumer) { continuation.yield($0) }
        continuation.finish()
        _ = task
        return measurement
    }

    /// `Task { await actor.receive(change) }` for every change: what async code writes to hand a
    /// change to an actor. Swift does not order separate tasks, so the consumer checks that every
    /// change arrives exactly once, in any order, and records how many arrived after a later
    /// change of their producer (`outOfOrder`). The injected fault is a duplicate (a swap is just
    /// another order here).
    static func actorTaskPerChange(_ spec: RunSpec) -> Measurement {
        var spec = spec
        spec.faultDuplicates = true
        let sink = Sink(Consumer(spec, order: .unordered))
        var measurement = runProducers(spec, consumer: sink.consumer) { event in
            Task { await sink.receive(event) }
        }
        measurement.hops = spec.changes
        measurement.outOfOrder = sink.consumer.outOfOrder
        sink.checkReceived(spec.changes, &measurement)
        return measurement
    }

    /// An unbounded `AsyncStream` consumed inside the actor (`for await` in an actor method, the
    /// consumer state in the actor): the ordered way to feed an actor from plain threads without
    /// the library. Unlike ``asyncStream(_:)``, whose consumer is a detached task on no actor.
    static func asyncStreamActor(_ spec: RunSpec) -> Measurement {
        let sink = Sink(Consumer(spec))
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .unbounded)
        let task = Task { await sink.consume(stream) }
        var measurement = runProducers(spec, consumer: sink.consumer) { continuation.yield($0) }
        continuation.finish()
        _ = task
        sink.checkReceived(spec.changes, &measurement)
        return measurement
    }

    /// `NotificationCenter.post` to an observer registered with a serial `OperationQueue`
    /// (swift-corelibs-foundation adds an operation per post and waits for the queue to empty).
    static func notificationCenter(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let center = NotificationCenter()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let name = Notification.Name("benchmark.change")
        let observer = center.addObserver(forName: name, object: nil, queue: queue) { notification in
            consumer.receive(notification.object as! Event)
        }
        let box = NotificationCenterBox(center: center, name: name)
        var measurement = runProducers(spec, consumer: consumer) { box.post($0) }
        measurement.hops = spec.changes
        center.removeObserver(observer)
        return measurement
    }

    /// The lossless floor: a `Mutex`-protected array; the change that makes it non-empty
    /// schedules one drain, which swaps the whole array out and runs the consumer on it.
    /// Skipped where `Synchronization` is unavailable.
    static func floor(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let floor = LosslessFloor<MutexBox<LosslessFloorState>>(
            queue: DispatchQueue(label: "benchmark.consumer"), hops: hops
        ) {
            consumer.receive($0)
        }
        var measurement = runProducers(spec, consumer: consumer) { floor.send($0) }
        measurement.hops = hops.value
        return measurement
    }

    /// The coalescing floor: a `Mutex`-protected latest value (with the old value of the first
    /// change not yet delivered, and how many changes are pending); the write that finds no
    /// delivery scheduled schedules one. Skipped where `Synchronization` is unavailable.
    static func coalescingFloor(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        let consumer = Consumer(spec, order: .increasing)
        let hops = HopCounter()
        let floor = CoalescingFloor(queue: DispatchQueue(label: "benchmark.consumer"), hops: hops) { old, new, count in
            consumer.receive(old: old, new: new, changes: count)
        }
        var measurement = runProducers(spec, consumer: consumer) { floor.set($0) }
        measurement.hops = hops.value
        measurement.finalValueMissed = consumer.last != floor.value
        measurement.check(
            consumer.last == floor.value,
            "coalescing floor did not end on the final value: delivered \(consumer.last.value), value \(floor.value.value)"
        )
        return measurement
    }
}

extension Baselines {
    /// How long the `Observations` row waits, after the producers returned, for its consumer to
    /// see the final value before it records a miss.
    static let observationsGraceSeconds = 2.0

    /// Observation's own way: an `@Observable` model whose property the producers write, and a
    /// detached task iterating `Observations { model.value }`. It coalesces (each iteration reads
    /// the value current after a change), so the consumer checks increasing per-producer order.
    /// Two things it is known to do are recorded, not failed: it can miss the final value (a
    /// write between the emission's read and its tracking being installed is never reported; the
    /// row then ends at the last value the consumer saw), and it sometimes emits the value it
    /// just emitted again (`repeatedValues`; the repeat is not passed to the consumer). A value
    /// older than one already emitted still fails the order check. Skipped where `Observations`
    /// is unavailable.
    static func observations(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            return .skipped(spec, Unavailable.observations)
        }
        let consumer = Consumer(spec, order: .increasing)
        let model = ObservationsModel()
        let watch = ObservationsWatch()
        let ready = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let task = Task.detached {
            defer { ended.signal() }
            var first = true
            var previous = Event.initial
            for await event in Observations({ model.value }) {
                if first {
                    // The first emission is the value when the iteration started: tracking is on.
                    first = false
                    ready.signal()
                }
                if event == .initial { continue }  // no producer wrote it
                if event == previous {
                    watch.repeated()
                    continue
                }
                previous = event
                consumer.receive(event)
                watch.saw(event)
            }
        }
        guard ready.wait(timeout: .now() + 10) == .success else {
            task.cancel()
            return Measurement(
                changes: spec.changes, elapsedNanos: 1, sendNanos: 1, latencies: [], peakGrowthBytes: nil, hops: nil,
                deliveries: 0, failures: ["the Observations iteration did not start within 10 s"])
        }
        var missed = false
        var stopFailure: String?
        /// Runs once the producers returned: waits for the final value (or the grace period),
        /// then stops the consumer task, so that its state can be read.
        func awaitFinalValue(timeout: Double) -> Arrival? {
            let final = model.value.value
            let deadline = now() &+ UInt64(observationsGraceSeconds * 1e9)
            while watch.seen.load(ordering: .acquiring) != final && now() < deadline {
                pause(nanoseconds: 50_000)
            }
            missed = watch.seen.load(ordering: .acquiring) != final
            task.cancel()
            if ended.wait(timeout: .now() + timeout) == .timedOut {
                stopFailure = "the Observations task did not end within \(Int(timeout)) s of its cancellation"
                return nil
            }
            guard watch.seen.load(ordering: .acquiring) >= 0 else {
                // It saw no write at all: the run ends with the grace period.
                return Arrival(finishedAt: now(), allocationCount: HeapAllocations.count)
            }
            // Seen: when the final value arrived. Missed: when the last value the consumer saw did.
            return Arrival(
                finishedAt: watch.seenAt.load(ordering: .relaxed),
                allocationCount: watch.allocationsAt.load(ordering: .relaxed))
        }
        var measurement = runProducers(
            spec, consumer: consumer, send: { model.value = $0 }, awaitConsumer: awaitFinalValue)
        measurement.finalValueMissed = missed
        measurement.repeatedValues = watch.repeats.load(ordering: .relaxed)
        if let stopFailure { measurement.failures.append(stopFailure) }
        return measurement
    }
}

/// A `Sendable` `@Observable` model: the getter reports the access and reads under the lock; the
/// setter reports the mutation (willSet/didSet) and stores under the same lock, so that a reader
/// woken by the willSet reads the new value, never the one it replaces.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
@Observable
final class ObservationsModel: Sendable {
    @ObservationIgnored private let storage = Mutex(Event.initial)

    var value: Event {
        get {
            access(keyPath: \.value)
            return storage.withLock { $0 }
        }
        set {
            storage.withLock { stored in withMutation(keyPath: \.value) { stored = newValue } }
        }
    }
}

/// What the `Observations` consumer saw last, published for the benchmark thread: the value, when
/// it arrived, and the allocation count then; and how many emissions repeated the previous one.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ObservationsWatch: Sendable {
    let seen = Atomic<Int>(-1)
    let seenAt = Atomic<UInt64>(0)
    let allocationsAt = Atomic<Int>(0)
    let repeats = Atomic<Int>(0)

    func repeated() {
        repeats.wrappingAdd(1, ordering: .relaxed)
    }

    func saw(_ event: Event) {
        seenAt.store(now(), ordering: .relaxed)
        allocationsAt.store(HeapAllocations.count, ordering: .relaxed)
        seen.store(event.value, ordering: .releasing)
    }
}

/// Lets the posting closure be `@Sendable`: `NotificationCenter` is thread-safe, but
/// swift-corelibs-foundation does not declare it `Sendable`.
private struct NotificationCenterBox: @unchecked Sendable {
    let center: NotificationCenter
    let name: Notification.Name

    func post(_ event: Event) {
        center.post(name: name, object: event)
    }
}

/// A value behind a lock, as the floors keep their state: `Synchronization.Mutex`
/// (``MutexBox``), or `pthread_mutex_t` (``PthreadBox``, in the contention section).
protocol LockedBox<Value>: Sendable {
    associatedtype Value: Sendable
    init(_ value: Value)
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result
}

/// ``LockedBox`` over `Synchronization.Mutex`, what a Swift user writes on Linux.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class MutexBox<Value: Sendable>: LockedBox {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    @inline(__always)
    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}

/// The least a lossless trampoline can do: one lock per change, one hop per burst.
final class LosslessFloor<Box: LockedBox<LosslessFloorState>>: Sendable {
    private let state = Box(LosslessFloorState())
    private let queue: DispatchQueue
    private let hops: HopCounter
    private let handler: @Sendable (Event) -> Void

    init(queue: DispatchQueue, hops: HopCounter, handler: @escaping @Sendable (Event) -> Void) {
        self.queue = queue
        self.hops = hops
        self.handler = handler
    }

    func send(_ event: Event) {
        let schedule = state.withLock { state -> Bool in
            state.buffer.append(event)
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
        if schedule {
            hops.increment()
            queue.async { self.drain() }
        }
    }

    private func drain() {
        var chunk: [Event] = []
        while true {
            // Swap the (empty, already allocated) chunk in for the buffer: no allocation once warm.
            let isEmpty = state.withLock { state -> Bool in
                swap(&chunk, &state.buffer)
                if chunk.isEmpty { state.drainScheduled = false }
                return chunk.isEmpty
            }
            if isEmpty { return }
            for event in chunk { handler(event) }
            chunk.removeAll(keepingCapacity: true)
        }
    }
}

/// What ``LosslessFloor`` keeps under its lock.
struct LosslessFloorState {
    var buffer: [Event] = []
    var drainScheduled = false
}

/// The least a coalescing observed value can do: one lock per write, at most one delivery waiting.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class CoalescingFloor: Sendable {
    private struct State {
        var value = Event.initial
        /// The value before the first change not yet delivered.
        var pendingOld = Event.initial
        var pendingCount = 0
        var deliveryScheduled = false
    }

    private let state = Mutex(State())
    private let queue: DispatchQueue
    private let hops: HopCounter
    private let handler: @Sendable (_ old: Event, _ new: Event, _ count: Int) -> Void

    init(queue: DispatchQueue, hops: HopCounter, handler: @escaping @Sendable (Event, Event, Int) -> Void) {
        self.queue = queue
        self.hops = hops
        self.handler = handler
    }

    var value: Event { state.withLock { $0.value } }

    func set(_ new: Event) {
        let schedule = state.withLock { state -> Bool in
            if state.pendingCount == 0 { state.pendingOld = state.value }
            state.value = new
            state.pendingCount += 1
            if state.deliveryScheduled { return false }
            state.deliveryScheduled = true
            return true
        }
        if schedule {
            hops.increment()
            queue.async { self.deliver() }
        }
    }

    private func deliver() {
        while true {
            let next = state.withLock { state -> (old: Event, new: Event, count: Int)? in
                guard state.pendingCount > 0 else {
                    state.deliveryScheduled = false
                    return nil
                }
                defer { state.pendingCount = 0 }
                return (state.pendingOld, state.value, state.pendingCount)
            }
            guard let next else { return }
            handler(next.old, next.new, next.count)
        }
    }
}

#if os(Linux)
extension Baselines {
    /// The bounded floor of the contention section's waiting row: what a user writes instead of
    /// `.waiting(capacity: 1024)`. A `pthread_mutex_t`, an array of at most 1024 changes and two
    /// condition variables; producers block on `notFull` while it is full; a consumer thread
    /// takes everything pending at once, runs the consumer on it outside the lock, and wakes the
    /// blocked producers: all of them (`broadcast`, the textbook way), or one (`wakesAll: false`: a
    /// producer that sends flat out fills the room alone; nobody is stranded, since the consumer
    /// wakes one more at each take while producers are blocked). Checked by the consumer
    /// (count, order per producer), and that the array never held more than the bound.
    static func boundedFloor(wakesAll: Bool) -> @Sendable (RunSpec) -> Measurement {
        { spec in
            let consumer = Consumer(spec)
            let queue = BoundedFloorQueue(bound: LibraryRows.waitingCapacity, wakesAll: wakesAll)
            let thread = Thread {
                var taken: [Event] = []
                taken.reserveCapacity(LibraryRows.waitingCapacity)
                while queue.take(into: &taken) {
                    for event in taken { consumer.receive(event) }
                    taken.removeAll(keepingCapacity: true)
                }
            }
            thread.stackSize = 1 << 18
            thread.start()
            var measurement = runProducers(spec, consumer: consumer) { queue.append($0) }
            queue.close()
            let (waits, maxPending) = queue.counts
            measurement.waits = waits
            measurement.check(
                maxPending <= LibraryRows.waitingCapacity,
                "\(maxPending) changes waited at once, bound \(LibraryRows.waitingCapacity)")
            measurement.check(
                consumer.deliveries == spec.changes, "\(consumer.deliveries) changes delivered, \(spec.changes) sent")
            return measurement
        }
    }
}

/// The queue of ``Baselines/boundedFloor(wakesAll:)``: `pthread_mutex_t`, two `pthread_cond_t`,
/// an array.
final class BoundedFloorQueue: @unchecked Sendable {
    // @unchecked: every field but the primitives is touched with `mutex` held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let notEmpty = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var pending: [Event] = []
    private var blockedProducers = 0
    private var consumerWaits = false
    private var closed = false
    private var waits = 0
    private var maxPending = 0
    private let bound: Int
    private let wakesAll: Bool

    init(bound: Int, wakesAll: Bool) {
        self.bound = bound
        self.wakesAll = wakesAll
        pending.reserveCapacity(bound)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(notFull, nil)
        pthread_cond_init(notEmpty, nil)
    }

    deinit {
        pthread_cond_destroy(notFull)
        pthread_cond_destroy(notEmpty)
        pthread_mutex_destroy(mutex)
        notFull.deallocate()
        notEmpty.deallocate()
        mutex.deallocate()
    }

    /// How many times a producer blocked, and the most changes the array held.
    var counts: (waits: Int, maxPending: Int) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return (waits, maxPending)
    }

    func append(_ event: Event) {
        pthread_mutex_lock(mutex)
        while pending.count >= bound {
            blockedProducers += 1
            waits += 1
            pthread_cond_wait(notFull, mutex)
            blockedProducers -= 1
        }
        pending.append(event)
        maxPending = max(maxPending, pending.count)
        if consumerWaits {
            consumerWaits = false
            pthread_cond_signal(notEmpty)
        }
        pthread_mutex_unlock(mutex)
    }

    /// No more changes: the consumer takes what is left and stops.
    func close() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_signal(notEmpty)
        pthread_mutex_unlock(mutex)
    }

    /// Waits for a change (or the close) and moves everything pending into `taken` (empty);
    /// `false` once closed and empty.
    func take(into taken: inout [Event]) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while pending.isEmpty && !closed {
            consumerWaits = true
            pthread_cond_wait(notEmpty, mutex)
        }
        if pending.isEmpty { return false }
        swap(&taken, &pending)
        if blockedProducers > 0 {
            if wakesAll { pthread_cond_broadcast(notFull) } else { pthread_cond_signal(notFull) }
        }
        return true
    }
}
#endif
