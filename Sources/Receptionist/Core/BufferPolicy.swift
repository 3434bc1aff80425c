/// What a receptionist does with changes that arrive faster than its target runs them.
///
/// Changes wait in a first-in, first-out buffer between the thread that produced them and the
/// drain that runs the task block on the target. The policy bounds that buffer:
///
/// - ``unbounded``: every change is kept and delivered (the default; lossless).
/// - ``dropOldest(capacity:)``: at most `capacity` changes wait; a new change pushes out the
///   oldest waiting one. The consumer sees the most recent `capacity` changes.
/// - ``dropNewest(capacity:)``: at most `capacity` changes wait; a change that arrives when the
///   buffer is full is discarded. The consumer sees the first `capacity` changes of a burst.
/// - ``waiting(capacity:)``: at most `capacity` changes wait; a sender that finds the buffer full
///   waits for room (back-pressure), and waiting senders are woken, one per drain step, once half the
///   capacity is free (all of it, in front of a pipeline's stages). Nothing is lost.
/// - ``watermarks(low:high:)``: nothing waits and nothing is dropped; a `send` that leaves the
///   backlog at or above `high` answers ``SendResult/acceptedAboveHighWatermark``, and
///   ``Receptionist/whenWritable(on:_:)`` calls the producer back once it has fallen to `low`. For
///   producers that must neither block nor lose anything (an event loop).
///
/// Every discarded change is counted in ``ReceptionistStatistics/dropped``: nothing is lost
/// silently. Changes already handed to a running drain are not counted against the capacity.
///
/// In a pipeline with stages, a bounded policy also bounds the buffer in front of the stages: with
/// a dropping policy, an element that finds `capacity` elements waiting for them is dropped there
/// (the newest, since the stages see their input in order) and counted as received and dropped;
/// with ``waiting(capacity:)``, its sender waits there, while the outputs behind the stages stand
/// for `capacity` elements or more. So memory stays bounded however fast and however many the
/// senders are.
public struct BufferPolicy: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case unbounded
        case dropOldest
        case dropNewest
        case waiting
        case watermarks
    }

    @usableFromInline
    let kind: Kind
    /// The most changes that may wait; `nil` for ``unbounded`` and ``watermarks(low:high:)``.
    public let capacity: Int?
    /// The low watermark of a ``watermarks(low:high:)`` policy; `nil` for the others.
    public let lowWatermark: Int?
    /// The high watermark of a ``watermarks(low:high:)`` policy; `nil` for the others.
    public let highWatermark: Int?

    private init(kind: Kind, capacity: Int?, low: Int? = nil, high: Int? = nil) {
        self.kind = kind
        self.capacity = capacity
        self.lowWatermark = low
        self.highWatermark = high
    }

    /// Keep every change until it is delivered.
    ///
    /// Memory follows the backlog both ways: the buffer grows in segments of up to 256 changes
    /// (about 16 KiB each), nothing already buffered is ever copied, and segments are given back
    /// as drains empty them (one empty segment is kept for the next burst).
    public static let unbounded = BufferPolicy(kind: .unbounded, capacity: nil)

    /// Keep at most `capacity` waiting changes; when full, discard the oldest waiting change.
    ///
    /// - Parameter capacity: the most changes that may wait. Must be at least 1; any other value
    ///   stops the program with a message naming `capacity`.
    public static func dropOldest(capacity: Int) -> BufferPolicy {
        BufferPolicy(kind: .dropOldest, capacity: validated(capacity, in: "dropOldest(capacity:)"))
    }

    /// Keep at most `capacity` waiting changes; when full, discard the change that just arrived.
    ///
    /// - Parameter capacity: the most changes that may wait. Must be at least 1; any other value
    ///   stops the program with a message naming `capacity`.
    public static func dropNewest(capacity: Int) -> BufferPolicy {
        BufferPolicy(kind: .dropNewest, capacity: validated(capacity, in: "dropNewest(capacity:)"))
    }

    /// Keep at most `capacity` waiting changes; when full, the sender waits for room: a thread
    /// calling ``Receptionist/send(_:)`` blocks, a task calling
    /// ``Receptionist/sendSuspending(_:)`` suspends. Nothing is dropped, and memory stays within
    /// a few capacities however fast and however many the producers are, with or without stages.
    /// The capacity counts elements on both sides of stages: `capacity` wait in front of them, and
    /// the stages take more only while the outputs behind them stand for fewer than `capacity`
    /// elements (an output stands for the elements the stages took since the previous one: a
    /// batch for its elements). The stages never wait; the senders do.
    ///
    /// Once the buffer has drained to half its capacity, waiting senders are woken one per drain
    /// step, the longest waiting first, and all that are left once it is empty (in front of
    /// stages: all of them once it is empty), or when the receptionist is cancelled or finishes
    /// (their sends are then refused). Where
    /// waiting would deadlock (in
    /// a task block of the same receptionist, on its target's queue, on the main thread for a
    /// main-actor target, in a Swift task for an actor target), a `send` that finds the buffer
    /// full is refused instead, returning `false` at once. The exact rules:
    /// <doc:ThreadingGuarantees#Back-pressure>.
    ///
    /// - Parameter capacity: the most changes that may wait. Must be at least 1; any other value
    ///   stops the program with a message naming `capacity`.
    public static func waiting(capacity: Int) -> BufferPolicy {
        BufferPolicy(kind: .waiting, capacity: validated(capacity, in: "waiting(capacity:)"))
    }

    /// Keep every change, and tell the producer when to pause and when to go on: flow control for
    /// a producer that must neither block nor suspend (an event loop, a socket reader, a device
    /// callback), as swift-nio's high/low watermark strategy does.
    ///
    /// - ``Receptionist/send(_:)`` never blocks and never drops. It answers
    ///   ``SendResult/acceptedAboveHighWatermark`` from the send that brings the level (the
    ///   elements held and not yet delivered) to `high` until the producer is told to go on; the
    ///   element is kept all the same, so a producer that sends on anyway loses nothing.
    /// - The producer hears ``Writability/paused``, ``Writability/writable`` (once the level is
    ///   down to `low`, checked after every task block) and ``Writability/ended(_:)`` through
    ///   ``Receptionist/onWritabilityChange(on:_:)`` or ``Receptionist/whenWritable(on:_:)``, on
    ///   the context it chooses, outside every lock of the library; ``Receptionist/sendSuspending(_:)``
    ///   suspends while paused.
    /// - The level counts every element from its `send` until its task block returned: waiting
    ///   in front of a pipeline's stages, kept by a time-based stage, waiting behind them, or in
    ///   its running task block. So memory stays within about `2 × high` elements while the
    ///   producer pauses when told; what is counted, and the two stages that cannot be:
    ///   <doc:ThreadingGuarantees#Flow-control>.
    ///
    /// To count bytes instead of elements, give a receptionist or a pipeline a weighing:
    /// ``Receptionist/init(on:buffering:weighing:_:)-(_,_,_,(Event)->Void)``, ``Pipeline/deliver(on:buffering:weighing:_:)-(DeliveryTarget,_,_,_)``.
    ///
    /// For an observed property, a write cannot be refused or paused: it is always kept, and the
    /// writer learns of the level through the observation's token
    /// (``ObservationToken/writability``, ``ObservationToken/onWritabilityChange(on:_:)``).
    ///
    /// - Parameters:
    ///   - low: the level at or below which a paused producer is told to go on. At least 0 and
    ///     less than `high`; any other value stops the program with a message naming `low`.
    ///   - high: the level at which `send` starts answering
    ///     ``SendResult/acceptedAboveHighWatermark``. At least 1; any other value stops the
    ///     program with a message naming `high`.
    public static func watermarks(low: Int, high: Int) -> BufferPolicy {
        validate(high >= 1, "BufferPolicy.watermarks(low:high:): high must be at least 1, got \(high)")
        validate(
            low >= 0 && low < high,
            "BufferPolicy.watermarks(low:high:): low must be at least 0 and less than high (\(high)), got \(low)")
        return BufferPolicy(kind: .watermarks, capacity: nil, low: low, high: high)
    }

    public var description: String {
        switch kind {
        case .unbounded: "unbounded"
        case .dropOldest: "dropOldest(capacity: \(capacity!))"
        case .dropNewest: "dropNewest(capacity: \(capacity!))"
        case .waiting: "waiting(capacity: \(capacity!))"
        case .watermarks: "watermarks(low: \(lowWatermark!), high: \(highWatermark!))"
        }
    }

    private static func validated(_ capacity: Int, in function: String) -> Int {
        validate(capacity >= 1, "BufferPolicy.\(function): capacity must be at least 1, got \(capacity)")
        return capacity
    }
}
