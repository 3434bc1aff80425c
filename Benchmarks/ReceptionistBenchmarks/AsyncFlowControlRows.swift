// The pausing-producer rows for an async producer: one task sending flat out into the same
// consumer (one serial queue, 1 µs per message), with what async code has for flow control:
// `await sendSuspending` under `.watermarks` and `.waiting`, the `writabilityChanges` sequence,
// and the plain alternative, an `AsyncStream` (unbounded: it has no back-pressure).

import Dispatch
import Foundation
import Receptionist
import Synchronization

extension LibraryRows {
    /// `.watermarks(low: 5 000, high: 10 000)`: `await sendSuspending(message)` keeps the message
    /// and suspends at `high` until the backlog is down to `low`.
    static func asyncSuspendingWatermarks(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return asyncReceptionistRow(spec, buffering: .watermarks(low: pauseLow, high: pauseHigh)) { receptionist in
            { message in
                let result = await receptionist.sendSuspending(message)
                return result.isAccepted ? (result.shouldPause ? .pause : .sent) : .refused
            }
        }
    }

    /// `.waiting(capacity: 10 000)`: `await sendSuspending(message)` suspends while the buffer
    /// is full.
    static func asyncSuspendingWaiting(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return asyncReceptionistRow(spec, buffering: .waiting(capacity: pauseHigh), mayWait: true) { receptionist in
            { message in await receptionist.sendSuspending(message).isAccepted ? .sent : .refused }
        }
    }

    /// `.watermarks(low: 5 000, high: 10 000)` followed through `writabilityChanges`: `send`, and
    /// at a pause, await the sequence's next states until `.writable` (or `.ended`).
    static func asyncWritabilityChanges(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        return asyncReceptionistRow(spec, buffering: .watermarks(low: pauseLow, high: pauseHigh)) { receptionist in
            let changes = ChangesIterator(receptionist.writabilityChanges)
            return { message in
                guard receptionist.send(message).shouldPause else { return .sent }
                await changes.untilNotPaused()
                return .pause
            }
        }
    }

    /// The plain alternative: an unbounded `AsyncStream` read by one task; `yield` never
    /// suspends, so memory follows the backlog.
    static func asyncStreamUnbounded(_ spec: RunSpec) -> Measurement {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            return .skipped(spec, Unavailable.synchronization)
        }
        let sink = MessageSink(expecting: spec.changes, work: spec.consumerWorkNanos, lossless: true)
        let (stream, continuation) = AsyncStream<Message>.makeStream()
        let reader = Task.detached {
            for await message in stream { sink.receive(message) }
        }
        let measurement = runAsyncPausingProducer(spec, sink: sink) { message in
            if case .enqueued = continuation.yield(message) { return .sent }
            return .refused
        }
        continuation.finish()
        _ = reader
        return measurement
    }

    /// A receptionist on the consumer's queue with `buffering`, fed by the async producer through
    /// the `send` that `makeSend` makes for it; then the checks of every pausing row.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private static func asyncReceptionistRow(
        _ spec: RunSpec, buffering: BufferPolicy, mayWait: Bool = false,
        makeSend: (Receptionist<Message>) -> @Sendable (Message) async -> PausingVerdict
    ) -> Measurement {
        let sink = MessageSink(expecting: spec.changes, work: spec.consumerWorkNanos, lossless: true)
        let queue = DispatchQueue(label: "benchmark.consumer")
        let receptionist = Receptionist<Message>(on: queue, buffering: buffering) { sink.receive($0) }
        var measurement = runAsyncPausingProducer(spec, sink: sink, send: makeSend(receptionist))
        let statistics = receptionist.statistics
        measurement.waits = statistics.waits
        measurement.check(statistics.received == spec.changes, "received \(statistics.received) of \(spec.changes)")
        measurement.check(statistics.dropped == 0 && statistics.discarded == 0, "messages lost: \(statistics)")
        if !mayWait {
            measurement.check(statistics.waits == 0, "a send waited for room \(statistics.waits) times")
            let pauses = measurement.pauses ?? 0
            measurement.check(
                pauses == statistics.pauses, "paused \(pauses) times, statistics.pauses \(statistics.pauses)")
        }
        measurement.check(
            statistics.maxPending <= pauseHigh, "\(statistics.maxPending) messages waited at once, bound \(pauseHigh)")
        if let growth = measurement.peakGrowthBytes {
            let bound = pauseHigh * MemoryLayout<Message>.size
            measurement.check(
                growth <= bound + pausingMemorySlack,
                "peak RSS grew \(bytes(Double(growth))), bound \(bytes(Double(bound))) + \(bytes(Double(pausingMemorySlack)))"
            )
        }
        receptionist.finish()
        return measurement
    }

    /// Runs one task that sends `spec.changes` messages through `send` as fast as it can (a
    /// pause is counted; the send itself waits as its row says), then waits for the consumer to
    /// have them all and checks that each arrived once, in order.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    private static func runAsyncPausingProducer(
        _ spec: RunSpec, sink: MessageSink, send: @escaping @Sendable (Message) async -> PausingVerdict
    ) -> Measurement {
        let messages = spec.changes
        let finished = DispatchSemaphore(value: 0)
        let result = Protected(ProducerTally())
        let memory = MemoryProbe.start()
        let switches = ContextSwitches.now()
        let start = now()
        // The self-test (`--inject-fault`): the second and third messages swapped.
        let swapped = spec.injectFault && messages >= 3
        Task.detached {
            var tally = ProducerTally()
            var last = now()
            for sequence in 1...messages {
                let stamp = swapped && (sequence == 2 || sequence == 3) ? 5 - sequence : sequence
                let verdict = await send(Message(stamp: stamp))
                let at = now()
                let took = at &- last
                tally.maxSendNanos = max(tally.maxSendNanos, took)
                if took > 1_000_000 { tally.slowSends &+= 1 }
                last = at
                switch verdict {
                case .sent: tally.accepted &+= 1
                case .pause:
                    tally.accepted &+= 1
                    tally.pauses &+= 1
                case .dropped: tally.dropped &+= 1
                case .refused: tally.refused &+= 1
                }
            }
            tally.endedAt = now()
            let counted = tally
            result.withLock { $0 = counted }
            finished.signal()
        }
        finished.wait()
        let tally = result.withLock { $0 }
        return pausingMeasurement(
            spec, sink: sink, tally: tally, lossy: false, start: start, memory: memory, switches: switches)
    }
}

/// One iterator of a `writabilityChanges` sequence, used by the one producer task only.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ChangesIterator: @unchecked Sendable {  // Unsafe: advanced by one task at a time (the producer's)
    private var iterator: AsyncStream<Writability>.Iterator

    init(_ changes: AsyncStream<Writability>) {
        iterator = changes.makeAsyncIterator()
    }

    /// After a send answered pause: awaits the states up to that pause's `.paused` (the states
    /// before it, such as the first `.writable`, are old news), then up to the state that ends
    /// it (or the end of the sequence).
    func untilNotPaused() async {
        while let state = await iterator.next(isolation: nil), state != .paused {}
        while let state = await iterator.next(isolation: nil), state == .paused {}
    }
}
