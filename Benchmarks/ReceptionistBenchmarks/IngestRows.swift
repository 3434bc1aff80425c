// The ingest section: a log pipeline as a server writes one. Producer threads (1, 2, 16, 64) flood
// records into `batch(count: 512, every: 20 ms)` with back-pressure, and one serial queue writes
// each batch to a file, a line per record. Beside it, the hand-written floor (a lock, an array,
// two condition variables and a consumer thread) and `DispatchQueue.async` per record. The
// figures: time per record and context switches per record; every row checks that each record was
// written once, in order per producer.

import Dispatch
import Foundation
import Receptionist

#if os(Linux)
import Glibc
#endif

/// The ingest rows' parameters.
enum Ingest {
    /// Records per batch, and the longest a record waits for its batch.
    static let batchSize = 512
    static let interval = Duration.milliseconds(20)
    /// The library's waiting capacity, in records: at most this many wait in front of the
    /// stages, and the batches waiting behind them stand for fewer than this many more (plus the
    /// one batch that crossed the mark, and the partial batch).
    static let capacity = 2_048
    /// The floor's bound, in records waiting for the consumer: the library's worst case, so that
    /// both hold about as many records in memory.
    static let floorBound = 2 * capacity + batchSize
}

/// Writes records as text lines to a file that is deleted once opened (the consumer's work, the
/// same in every row): "producer sequence\n", formatted by hand.
final class LineWriter: @unchecked Sendable {
    // @unchecked: used by one consumer at a time (a serial queue or the floor's consumer thread).
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private(set) var lines = 0

    init() {
        var template = Array("\(NSTemporaryDirectory())/receptionist-ingest-XXXXXX".utf8CString)
        descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        precondition(descriptor >= 0, "receptionist-benchmarks: cannot create a temporary file")
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        buffer.reserveCapacity(Ingest.batchSize * 24)
    }

    deinit { close(descriptor) }

    /// Formats `events` and writes them with one `write`.
    func write(_ events: some Collection<Event>) {
        for event in events {
            append(event.producer)
            buffer.append(UInt8(ascii: " "))
            append(event.sequence)
            buffer.append(UInt8(ascii: "\n"))
        }
        lines += events.count
        buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                precondition(written > 0, "receptionist-benchmarks: write failed")
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    private func append(_ number: Int) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var value = number
        var count = 0
        withUnsafeMutableBytes(of: &digits) { digits in
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
                count += 1
            } while value > 0
            for index in stride(from: count - 1, through: 0, by: -1) { buffer.append(digits[index]) }
        }
    }
}

extension LibraryRows {
    /// `batch(count: 512, every: 20 ms)` with `.waiting(capacity: 2048)` to a serial queue that
    /// writes each batch to a file.
    static func ingest(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let writer = LineWriter()
        let hops = HopCounter()
        let receptionist = Receptionist.pipeline(of: Event.self)
            .batch(count: Ingest.batchSize, every: Ingest.interval)
            .deliver(
                on: CountingTarget(DispatchQueue(label: "benchmark.writer"), hops),
                buffering: .waiting(capacity: Ingest.capacity)
            ) { batch in
                writer.write(batch)
                consumer.receive(batch: batch)
            }
        // The last partial batch is handed on by `flush()` once every producer returned.
        var measurement = runProducers(
            spec, consumer: consumer, send: { receptionist.send($0) }, thenHandOn: { receptionist.flush() })
        measurement.hops = hops.value
        let statistics = receptionist.statistics
        measurement.waits = statistics.waits
        measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "records lost: \(statistics)")
        measurement.check(writer.lines == spec.changes, "\(writer.lines) lines written, \(spec.changes) records")
        receptionist.finish()
        return measurement
    }
}

extension Baselines {
    /// `DispatchQueue.async` per record onto the writer's queue (no bound: memory follows the
    /// backlog).
    static func ingestAsync(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let writer = LineWriter()
        let queue = DispatchQueue(label: "benchmark.writer")
        var measurement = runProducers(spec, consumer: consumer) { event in
            queue.async {
                writer.write(CollectionOfOne(event))
                consumer.receive(event)
            }
        }
        measurement.hops = spec.changes
        measurement.check(writer.lines == spec.changes, "\(writer.lines) lines written, \(spec.changes) records")
        return measurement
    }
}

#if os(Linux)
extension Baselines {
    /// The hand-written floor: a lock, an array and two condition variables. Producers append one
    /// record per lock and wait while ``Ingest/floorBound`` records wait; a consumer thread takes
    /// everything pending once 512 wait or 20 ms after the first, wakes every waiting producer,
    /// and writes it in batches of 512.
    static func ingestFloor(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let writer = LineWriter()
        let queue = BoundedLogQueue(bound: Ingest.floorBound)
        let consumerThread = Thread {
            var taken: [Event] = []
            while queue.take(into: &taken) {
                var start = taken.startIndex
                while start < taken.endIndex {
                    let end = min(start + Ingest.batchSize, taken.endIndex)
                    writer.write(taken[start..<end])
                    consumer.receive(batch: Array(taken[start..<end]))
                    start = end
                }
                taken.removeAll(keepingCapacity: true)
            }
        }
        consumerThread.start()
        var measurement = runProducers(
            spec, consumer: consumer, send: { queue.append($0) }, thenHandOn: { queue.close() })
        measurement.waits = queue.waits
        measurement.check(writer.lines == spec.changes, "\(writer.lines) lines written, \(spec.changes) records")
        return measurement
    }
}

/// The floor's bounded queue: `pthread_mutex_t`, two `pthread_cond_t`, an array.
final class BoundedLogQueue: @unchecked Sendable {
    // @unchecked: every field but the primitives is touched with `mutex` held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let notFull = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let notEmpty = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var pending: [Event] = []
    private var waitingProducers = 0
    private var closed = false
    private(set) var waits = 0
    private let bound: Int

    init(bound: Int) {
        self.bound = bound
        pending.reserveCapacity(bound)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(notFull, &attributes)
        pthread_cond_init(notEmpty, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(notFull)
        pthread_cond_destroy(notEmpty)
        pthread_mutex_destroy(mutex)
        notFull.deallocate()
        notEmpty.deallocate()
        mutex.deallocate()
    }

    func append(_ event: Event) {
        pthread_mutex_lock(mutex)
        while pending.count >= bound {
            waitingProducers += 1
            waits += 1
            pthread_cond_wait(notFull, mutex)
            waitingProducers -= 1
        }
        pending.append(event)
        if pending.count == Ingest.batchSize { pthread_cond_signal(notEmpty) }
        pthread_mutex_unlock(mutex)
    }

    /// No more records: the consumer takes what is left and stops.
    func close() {
        pthread_mutex_lock(mutex)
        closed = true
        pthread_cond_signal(notEmpty)
        pthread_mutex_unlock(mutex)
    }

    /// Waits for a batch (512 records, or 20 ms after the first one arrived, or the close) and
    /// moves everything pending into `taken`; `false` once closed and empty.
    func take(into taken: inout [Event]) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        var deadline: timespec?
        while pending.count < Ingest.batchSize && !closed {
            if pending.isEmpty {
                deadline = nil
                pthread_cond_wait(notEmpty, mutex)
                continue
            }
            if deadline == nil {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let nanos = Int(now.tv_nsec) + 20_000_000
                deadline = timespec(tv_sec: now.tv_sec + nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
            }
            var until = deadline!
            if pthread_cond_timedwait(notEmpty, mutex, &until) == ETIMEDOUT { break }
        }
        if pending.isEmpty { return !closed }
        swap(&taken, &pending)
        if waitingProducers > 0 { pthread_cond_broadcast(notFull) }
        return true
    }
}
#endif

/// The ingest section's rows, for every producer count.
func ingestScenarios(_ records: Int, makeSpec: (Int, Int) -> RunSpec) -> [Scenario] {
    var rows: [Scenario] = []
    for producers in [1, 2, 16, 64] {
        var spec = makeSpec(producers, records)
        spec.stampEvery = 1_024
        func row(_ key: String, _ name: String, _ kind: Kind, _ run: @escaping @Sendable (RunSpec) -> Measurement) {
            rows.append(Scenario(key: key, name: name, kind: kind, section: .ingest, spec: spec, run: run))
        }
        row(
            "ingest", "batch(count: 512, every: 20 ms) + waiting(capacity: 2048) → file writer", .library,
            LibraryRows.ingest)
        #if os(Linux)
        row(
            "ingest-floor", "floor: lock + array + 2 condition variables (bound 4608) → file writer", .floor,
            Baselines.ingestFloor)
        #endif
        row("ingest-async", "DispatchQueue.async per record → file writer", .baseline, Baselines.ingestAsync)
    }
    return rows
}
