/// What became of the elements handed over by one ``Receptionist/send(contentsOf:)``: how many
/// the receptionist kept, and the one answer a producer acts on.
///
/// ```swift
/// let sent = receptionist.send(contentsOf: lines)
/// if sent.shouldPause { pauseReading() }
/// if sent.accepted < lines.count { log("\(lines.count - sent.accepted) lines not kept: \(sent.result)") }
/// ```
public struct SendContentsResult: Sendable, Hashable, CustomStringConvertible {
    /// How many elements were handed over.
    public let count: Int
    /// How many of them were kept: to be delivered (``SendResult/isAccepted``), or folded into a
    /// waiting one. The others were dropped by the buffer policy or refused.
    public let accepted: Int
    /// The answer for all of them, as one ``Receptionist/send(_:)`` answers for one:
    /// - a refusal (``SendResult/refused(_:)``) if the receptionist refused them (it was
    ///   cancelled or finished; with a ``BufferPolicy/waiting(capacity:)`` buffer, also a
    ///   refusal after some were taken: the rest was not sent);
    /// - ``SendResult/acceptedAboveHighWatermark`` if the producer should pause after these (a
    ///   pause answered to any of them is kept);
    /// - otherwise the answer to the last one.
    ///
    /// With no elements, the answer a send would give about pausing: accepted, accepted above
    /// the high watermark while paused, or refused once ended.
    public let result: SendResult

    @inlinable
    init(count: Int, accepted: Int, result: SendResult) {
        self.count = count
        self.accepted = accepted
        self.result = result
    }

    /// Whether the producer should stop sending until told to go on: ``result`` is
    /// ``SendResult/acceptedAboveHighWatermark``.
    @inlinable
    public var shouldPause: Bool { result.shouldPause }

    public var description: String { "\(accepted) of \(count) accepted, \(result)" }
}

extension SendContentsResult {
    /// No elements yet, with the answer a send would give about pausing.
    @inlinable
    init(nothingSentAnswering result: SendResult) {
        self.init(count: 0, accepted: 0, result: result)
    }

    /// This answer, then one more element's.
    @inlinable
    func adding(_ next: SendResult) -> SendContentsResult {
        SendContentsResult(
            count: count + 1, accepted: accepted + (next.isAccepted ? 1 : 0), result: result.followed(by: next))
    }
}
