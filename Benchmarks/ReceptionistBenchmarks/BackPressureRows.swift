// The rows of back-pressure behind stages: producers (1, 2 or 8 threads) flood a pipeline whose
// consumer is slow, with `.waiting(capacity:)`. The figure is peak memory: with a waiting policy
// it must stay within a few capacities' worth of changes whatever the number of producers, stages
// or not, while every change arrives once, in order per producer. The unbounded staged row shows
// what the bound saves; the semaphore row is the plain alternative (a counting semaphore of the
// capacity around `DispatchQueue.async`).

import Dispatch
import Foundation
import Receptionist

extension LibraryRows {
    /// The capacity of the waiting rows with a `map` stage, in changes.
    static let stagedWaitingCapacity = 1024
    /// The capacity of the waiting row with `batch(count: 64)`, in elements (16 batches' worth).
    static let batchWaitingCapacity = 1024
    static let backPressureBatchSize = 64

    /// `map { $0 }` then `.waiting(capacity: 1024)` to a serial queue.
    static func waitingMap(_ spec: RunSpec) -> Measurement {
        mapRow(spec, capacity: stagedWaitingCapacity)
    }

    /// `map { $0 }` with the default unbounded buffer: memory follows the backlog.
    static func unboundedMap(_ spec: RunSpec) -> Measurement {
        mapRow(spec, capacity: nil)
    }

    /// `map { $0 }` then `.waiting(capacity:)`, or the unbounded default for `nil`.
    private static func mapRow(_ spec: RunSpec, capacity: Int?) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist.pipeline(of: Event.self)
            .map { $0 }
            .deliver(on: CountingTarget(queue, hops), buffering: capacity.map { .waiting(capacity: $0) } ?? .unbounded)
        {
            consumer.receive($0)
        }
        let measurement = runProducers(spec, consumer: consumer) { receptionist.send($0) }
        return finishStaged(receptionist, capacity: capacity, hops: hops, measurement)
    }

    /// `batch(count: 64)` then `.waiting(capacity: 1024)` to a serial queue.
    static func waitingBatch(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let hops = HopCounter()
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist.pipeline(of: Event.self)
            .batch(count: backPressureBatchSize)
            .deliver(on: CountingTarget(queue, hops), buffering: .waiting(capacity: batchWaitingCapacity)) {
                consumer.receive(batch: $0)
            }
        // The last partial batch is handed on by `flush()` once every producer returned.
        let measurement = runProducers(
            spec, consumer: consumer, send: { receptionist.send($0) }, thenHandOn: { receptionist.flush() })
        return finishStaged(receptionist, capacity: batchWaitingCapacity, hops: hops, measurement)
    }

    /// Checks that a staged row lost nothing and kept its buffers within their capacity, and
    /// lets the pipeline finish.
    private static func finishStaged(
        _ receptionist: Receptionist<Event>, capacity: Int?, hops: HopCounter, _ run: Measurement
    ) -> Measurement {
        var measurement = run
        measurement.hops = hops.value
        let statistics = receptionist.statistics
        measurement.waits = statistics.waits
        // A lost change shows as a consumer that never saw its last change (a timeout), a gap in
        // a producer's sequence (the consumer's order check), or here.
        measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "changes lost: \(statistics)")
        if let capacity {
            // Outputs stand for at least one element each.
            measurement.check(
                statistics.maxPending <= capacity,
                "\(statistics.maxPending) outputs waited at once, capacity \(capacity) elements")
            if let intake = receptionist.intakeStatistics {
                measurement.check(
                    intake.maxPending <= capacity + 1,
                    "\(intake.maxPending) inputs waited for the stages at once, capacity \(capacity)")
            }
        }
        receptionist.finish()
        return measurement
    }
}

extension Baselines {
    /// The plain alternative: a `DispatchSemaphore` of 1024 permits, taken by the producer before
    /// each `DispatchQueue.async` and given back by the block.
    static func semaphoreAsync(_ spec: RunSpec) -> Measurement {
        let consumer = Consumer(spec)
        let queue = DispatchQueue(label: "benchmark.consumer")
        let permits = DispatchSemaphore(value: LibraryRows.stagedWaitingCapacity)
        var measurement = runProducers(spec, consumer: consumer) { event in
            permits.wait()
            queue.async {
                consumer.receive(event)
                permits.signal()
            }
        }
        measurement.hops = spec.changes
        return measurement
    }
}
