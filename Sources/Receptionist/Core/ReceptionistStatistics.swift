/// Counters that account for every change a receptionist was given.
///
/// Read them with ``DeliveryHandle/statistics`` (on a ``Receptionist``, an ``ObservationToken``
/// or a ``Hub/Subscription``). A snapshot is taken under the receptionist's lock, and every
/// snapshot satisfies
///
///     received == delivered + inFlight + dropped + discarded + coalesced + pending
///
/// `delivered` advances as each task block returns; `inFlight` counts changes a drain has taken
/// for delivery and not yet finished delivering (at most one drain budget, 0 when idle). With
/// ``DeliveryTarget/immediate``, a change sent to an idle receptionist goes straight to the task
/// block without waiting in the buffer, so it never counts in `pending` or `maxPending`.
public struct ReceptionistStatistics: Sendable, Hashable, CustomStringConvertible {
    /// Changes accepted by the receptionist (sends after cancel or finish are not counted).
    public let received: Int
    /// Changes whose task block ran to completion.
    public let delivered: Int
    /// Changes discarded by the ``BufferPolicy`` because the buffer was full.
    public let dropped: Int
    /// Changes that were still waiting (or in flight) when the receptionist was cancelled.
    public let discarded: Int
    /// Changes folded into a change that was still waiting, by a coalescing receptionist
    /// (see <doc:Stages#coalesce>); each delivered output reports how many it stands for.
    public let coalesced: Int
    /// Changes waiting in the buffer at the time of the snapshot.
    public let pending: Int
    /// Changes taken by a running drain whose task block has not returned yet.
    public let inFlight: Int
    /// The largest number of changes that were ever waiting at once.
    public let maxPending: Int
    /// How many times a sender waited for room in a full ``BufferPolicy/waiting(capacity:)``
    /// buffer (0 with every other policy).
    public let waits: Int

    init(
        received: Int = 0,
        delivered: Int = 0,
        dropped: Int = 0,
        discarded: Int = 0,
        coalesced: Int = 0,
        pending: Int = 0,
        inFlight: Int = 0,
        maxPending: Int = 0,
        waits: Int = 0
    ) {
        self.received = received
        self.delivered = delivered
        self.dropped = dropped
        self.discarded = discarded
        self.coalesced = coalesced
        self.pending = pending
        self.inFlight = inFlight
        self.maxPending = maxPending
        self.waits = waits
    }

    /// These statistics with `waits` more waits (a pipeline's intake adds its senders' waits).
    func adding(waits more: Int) -> ReceptionistStatistics {
        ReceptionistStatistics(
            received: received, delivered: delivered, dropped: dropped, discarded: discarded,
            coalesced: coalesced, pending: pending, inFlight: inFlight, maxPending: maxPending,
            waits: waits + more)
    }

    public var description: String {
        "received \(received), delivered \(delivered), dropped \(dropped), "
            + "discarded \(discarded), coalesced \(coalesced), pending \(pending), in flight \(inFlight), max pending \(maxPending), waits \(waits)"
    }
}
