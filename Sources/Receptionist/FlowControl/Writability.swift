/// Whether a producer may send: the state that flow control tells a producer, and its end.
///
/// A producer that must neither block nor suspend (an event loop, a socket reader) follows it:
/// it sends while ``writable``, stops reading at ``paused`` and reads again at the next
/// ``writable``, and lets go at ``ended(_:)``, after which every send is refused. Only a
/// ``BufferPolicy/watermarks(low:high:)`` buffer ever pauses; every receptionist ends.
///
/// Read it with ``Receptionist/writability``, hear each change with
/// ``Receptionist/onWritabilityChange(on:_:)`` (in order, never the same state twice in a row),
/// or await the changes with ``Receptionist/writabilityChanges``.
public enum Writability: Sendable, Hashable, CustomStringConvertible {
    /// The producer may send.
    case writable
    /// The backlog reached the high watermark: the producer should stop sending until the next
    /// ``writable``. What it sends meanwhile is still kept (and answered
    /// ``SendResult/acceptedAboveHighWatermark``).
    case paused
    /// The receptionist no longer accepts anything; the state never changes again.
    case ended(End)

    /// Why a receptionist stopped accepting.
    public enum End: Sendable, Hashable {
        /// ``Receptionist/cancel()`` was called, or the receptionist was released without
        /// finishing.
        case cancelled
        /// ``Receptionist/finish()`` was called: what was accepted is still being delivered, or
        /// was delivered.
        case finished
    }

    /// Whether the producer may send: `true` for ``writable`` only.
    @inlinable
    public var isWritable: Bool { self == .writable }

    /// Whether the receptionist no longer accepts anything.
    @inlinable
    public var isEnded: Bool {
        if case .ended = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .writable: "writable"
        case .paused: "paused"
        case .ended(.cancelled): "ended (cancelled)"
        case .ended(.finished): "ended (finished)"
        }
    }
}
