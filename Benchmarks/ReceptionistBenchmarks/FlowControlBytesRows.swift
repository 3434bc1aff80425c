// The byte-weighted rows of a producer that must not block (issue 40, item 5): the producer of the
// pausing-producer rows, sending messages whose payloads are 64 to 2 048 bytes (about 1 KiB on
// average, the size a message's stamp picks), to the same consumer (1 µs per message). With
// `weighing: { $0.payload.count }` the watermarks count bytes: `.watermarks(low: 512 KiB,
// high: 1 MiB)`. Beside it: the same producer with watermarks counted in messages, 500 / 1 000,
// which bound the count but let the bytes vary twofold either way; and the hand-written floor, the
// watermark floor with an atomic byte backlog. Each send allocates its payload, in every row.

import Dispatch
import Foundation
import Receptionist
import Synchronization

/// A message of the byte-weighted rows: the producer's stamp and a payload of
/// ``ByteMessage/size(of:)`` bytes.
struct ByteMessage: Sendable {
    var stamp: Int
    var payload: [UInt8]

    init(stamp: Int) {
        self.stamp = stamp
        payload = [UInt8](repeating: UInt8(truncatingIfNeeded: stamp), count: Self.size(of: stamp))
    }

    /// The payload size of the message stamped `stamp`: 64 to 2 048 bytes, spread by a
    /// multiplicative hash so that sizes do not come in runs.
    static func size(of stamp: Int) -> Int {
        64 + Int((UInt64(truncatingIfNeeded: stamp) &* 2_654_435_761) % 1_985)
    }

    static let weigh: @Sendable (ByteMessage) -> Int = { $0.payload.count }
}

/// Whether a pausing-producer row sends ``ByteMessage``s.
func isBytesRow(_ key: String) -> Bool {
    key.hasPrefix("nonblocking-bytes-")
}

extension LibraryRows {
    /// The byte watermarks of the byte-weighted rows.
    static let bytesLow = 512 << 10
    static let bytesHigh = 1 << 20
    /// The largest payload (``ByteMessage/size(of:)``).
    static let largestPayload = 2_048

    /// `.watermarks(low: 512 KiB, high: 1 MiB)` weighing the payload bytes: the producer pauses
    /// on `shouldPause` and waits for `whenWritable(on: .immediate)`.
    static func pausingBytesWatermarks(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return pausingBytesRow(spec, .weighed)
    }

    /// The same behind a `map` stage: `deliver(on:buffering:weighing:_:)` on a pipeline.
    static func pausingBytesPipelineWatermarks(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return pausingBytesRow(spec, .weighedPipeline)
    }

    /// `.watermarks(low: 500, high: 1 000)` counted in messages, on the same messages.
    static func pausingBytesCountWatermarks(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return pausingBytesRow(spec, .counted)
    }

    /// How a byte-weighted row bounds its messages.
    private enum BytesShape {
        /// `Receptionist(on:buffering:weighing:_:)`.
        case weighed
        /// A `map` stage, then `deliver(on:buffering:weighing:_:)`.
        case weighedPipeline
        /// Watermarks counted in messages.
        case counted
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private static func pausingBytesRow(_ spec: RunSpec, _ shape: BytesShape) -> Measurement {
        let sink = MessageSink(expecting: spec.changes, work: spec.consumerWorkNanos, lossless: true)
        let queue = DispatchQueue(label: "benchmark.consumer")
        let task: @Sendable (ByteMessage) -> Void = { sink.receive(stamp: $0.stamp) }
        let bytes = BufferPolicy.watermarks(low: bytesLow, high: bytesHigh)
        let receptionist: Receptionist<ByteMessage> =
            switch shape {
            case .weighed: Receptionist(on: queue, buffering: bytes, weighing: ByteMessage.weigh, task)
            case .weighedPipeline:
                Receptionist.pipeline(of: ByteMessage.self).map { $0 }
                    .deliver(on: queue, buffering: bytes, weighing: ByteMessage.weigh, task)
            case .counted: Receptionist(on: queue, buffering: .watermarks(low: 500, high: 1_000), task)
            }
        let resumed = DispatchSemaphore(value: 0)
        var (measurement, tally) = runPausingProducer(
            spec, sink: sink, lossy: false,
            send: { message in
                receptionist.send(ByteMessage(stamp: message.stamp)).shouldPause ? .pause : .sent
            },
            waitUntilWritable: {
                receptionist.whenWritable(on: .immediate) { _ in resumed.signal() }
                resumed.wait()
            })
        let statistics = receptionist.statistics
        measurement.check(
            statistics.pauses == tally.pauses, "paused \(tally.pauses) times, statistics.pauses \(statistics.pauses)")
        measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "messages lost: \(statistics)")
        // Weighed: 1 MiB of payloads, and one more message that crossed it (behind a stage, one
        // more on each side of it). Counted: 1 000 messages of up to 2 KiB each.
        let bound =
            switch shape {
            case .weighed: bytesHigh + largestPayload
            case .weighedPipeline: bytesHigh + 2 * largestPayload
            case .counted: 1_000 * largestPayload
            }
        checkPausingMemory(&measurement, bound: bound)
        receptionist.finish()
        return measurement
    }

    /// The hand-written floor: ``WatermarkFloor`` with a byte backlog.
    static func pausingBytesFloor(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        var measurement = floorRow(
            spec, low: bytesLow, high: bytesHigh, weighing: ByteMessage.weigh, stamp: \.stamp
        ) { ByteMessage(stamp: $0.stamp) }
        checkPausingMemory(&measurement, bound: bytesHigh + largestPayload)
        return measurement
    }
}
