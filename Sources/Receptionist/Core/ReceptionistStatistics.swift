/// Counters that account for every change a receptionist was given.
///
/// Read them with ``Receptionist/statistics`` or ``ObservationToken/statistics``. A snapshot is
/// taken under the receptionist's lock, so `received`, `dropped`, `discarded` and `pending` are
/// consistent with one another. `delivered` is advanced by the drain after each task block
/// returns; once the receptionist is idle (no drain running),
///
///     received == delivered + dropped + discarded + pending
///
/// holds exactly. While a drain is running, up to one chunk of changes is in flight (taken from
/// the buffer, not yet delivered) and the left side is larger by that amount.
public struct ReceptionistStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Changes accepted by the receptionist (sends after cancel or finish are not counted).
    public var received: Int
    /// Changes whose task block ran to completion.
    public var delivered: Int
    /// Changes discarded by the ``BufferPolicy`` because the buffer was full.
    public var dropped: Int
    /// Changes that were still waiting (or in flight) when the receptionist was cancelled.
    public var discarded: Int
    /// Changes waiting in the buffer at the time of the snapshot.
    public var pending: Int
    /// The largest number of changes that were ever waiting at once.
    public var maxPending: Int

    public init(
        received: Int = 0,
        delivered: Int = 0,
        dropped: Int = 0,
        discarded: Int = 0,
        pending: Int = 0,
        maxPending: Int = 0
    ) {
        self.received = received
        self.delivered = delivered
        self.dropped = dropped
        self.discarded = discarded
        self.pending = pending
        self.maxPending = maxPending
    }

    public var description: String {
        "received \(received), delivered \(delivered), dropped \(dropped), "
            + "discarded \(discarded), pending \(pending), max pending \(maxPending)"
    }
}
