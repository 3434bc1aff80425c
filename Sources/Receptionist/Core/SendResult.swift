/// What became of one element handed to ``Receptionist/send(_:)``, and whether its producer should
/// go on.
///
/// ```swift
/// if receptionist.send(reading).isAccepted { … }        // it will be delivered, unless cancelled
///
/// switch receptionist.send(message) {                   // a producer that must not block
/// case .accepted, .acceptedEvictingOldest, .coalesced: break
/// case .acceptedAboveHighWatermark:                     // pause until told to go on
///     pauseReading()
///     receptionist.whenWritable(on: eventLoop) { resumeReading() }
/// case .dropped: lost += 1                              // counted in statistics.dropped too
/// case .refused: stop()                                 // cancelled, finished, …
/// }
/// ```
///
/// In a pipeline with stages, the result says what became of the element at the pipeline's
/// *intake*, in front of the stages: what the stages do with it later (a filter, a batch) and what
/// the buffer behind them drops show in ``ReceptionistStatistics``.
public enum SendResult: Sendable, Hashable, CustomStringConvertible {
    /// Accepted: it will be delivered, unless the receptionist is cancelled first.
    case accepted
    /// Accepted, and the backlog of a ``BufferPolicy/watermarks(low:high:)`` buffer is at or above
    /// its high watermark: the producer should pause until ``Receptionist/whenWritable(on:_:)``
    /// calls it back. Every send answers this from the send that reached the high watermark until
    /// the backlog has fallen to the low watermark; each such element is still kept.
    case acceptedAboveHighWatermark
    /// Accepted; to make room, the oldest waiting element was discarded
    /// (``BufferPolicy/dropOldest(capacity:)``) and counted in ``ReceptionistStatistics/dropped``.
    case acceptedEvictingOldest
    /// Folded into the change still waiting, by a coalescing pipeline (`coalesce()`); counted in
    /// ``ReceptionistStatistics/coalesced``.
    case coalesced
    /// Discarded because the buffer was full (``BufferPolicy/dropNewest(capacity:)``, or a bounded
    /// pipeline's intake); counted in ``ReceptionistStatistics/dropped``.
    case dropped
    /// Not accepted, and not counted: the receptionist no longer takes elements, or the sender
    /// could not wait for room.
    case refused(Refusal)

    /// Why an element was refused.
    public enum Refusal: Sendable, Hashable {
        /// The receptionist was cancelled (or released without finishing).
        case cancelled
        /// The receptionist finished, or is finishing.
        case finished
        /// A ``BufferPolicy/waiting(capacity:)`` buffer was full, and waiting here for room could
        /// deadlock (<doc:ThreadingGuarantees#Back-pressure>).
        case waitingWouldDeadlock
        /// The task calling ``Receptionist/sendSuspending(_:)`` was cancelled while it waited for
        /// room.
        case taskCancelled
    }

    /// Whether the element (or, for ``coalesced``, the change it was folded into) will be
    /// delivered, unless the receptionist is cancelled first.
    @inlinable
    public var isAccepted: Bool {
        switch self {
        case .accepted, .acceptedAboveHighWatermark, .acceptedEvictingOldest, .coalesced: true
        case .dropped, .refused: false
        }
    }

    /// Whether the producer should stop sending until ``Receptionist/whenWritable(on:_:)`` calls
    /// it back: `true` only for ``acceptedAboveHighWatermark``.
    @inlinable
    public var shouldPause: Bool { self == .acceptedAboveHighWatermark }

    public var description: String {
        switch self {
        case .accepted: "accepted"
        case .acceptedAboveHighWatermark: "accepted above the high watermark"
        case .acceptedEvictingOldest: "accepted, evicting the oldest"
        case .coalesced: "coalesced"
        case .dropped: "dropped"
        case .refused(.cancelled): "refused: cancelled"
        case .refused(.finished): "refused: finished"
        case .refused(.waitingWouldDeadlock): "refused: waiting would deadlock"
        case .refused(.taskCancelled): "refused: task cancelled"
        }
    }
}

extension SendResult {
    /// The answer for elements sent in turn, this one's then `next`'s: a refusal ends it, a
    /// pause is kept to the end (it is what the producer must act on), otherwise the latest
    /// answer (`Receptionist.send(contentsOf:)`).
    @inlinable
    func followed(by next: SendResult) -> SendResult {
        if case .refused = next { return next }
        return shouldPause ? self : next
    }
}
