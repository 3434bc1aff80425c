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
///
/// With stages, the counters above count the outputs of the last stage (for example batches) on
/// their way to the task block; what waits *in front of* the stages (elements not yet run through
/// them) is ``pendingBeforeStages``, so that every queue between the producer and the task block
/// shows.
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
    /// How many times a ``BufferPolicy/watermarks(low:high:)`` buffer told its producers to pause
    /// (a send reached the high watermark); 0 with every other policy.
    public let pauses: Int
    /// In a pipeline with stages: the elements waiting in front of the stages at the time of the
    /// snapshot (for an observation, the changes not yet run through them); 0 without stages.
    public let pendingBeforeStages: Int
    /// In a pipeline with stages: the largest number of elements that ever waited in front of the
    /// stages at once (for an observation, of the changes in front of its stages' intake or in
    /// it, whichever was larger); 0 without stages.
    public let maxPendingBeforeStages: Int

    init(
        received: Int = 0,
        delivered: Int = 0,
        dropped: Int = 0,
        discarded: Int = 0,
        coalesced: Int = 0,
        pending: Int = 0,
        inFlight: Int = 0,
        maxPending: Int = 0,
        waits: Int = 0,
        pauses: Int = 0,
        pendingBeforeStages: Int = 0,
        maxPendingBeforeStages: Int = 0
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
        self.pauses = pauses
        self.pendingBeforeStages = pendingBeforeStages
        self.maxPendingBeforeStages = maxPendingBeforeStages
    }

    /// These statistics (a pipeline's delivery's) with what its intake, in front of the stages,
    /// adds: its senders' waits and pauses, and what waits there.
    func adding(intake: ReceptionistStatistics) -> ReceptionistStatistics {
        ReceptionistStatistics(
            received: received, delivered: delivered, dropped: dropped, discarded: discarded,
            coalesced: coalesced, pending: pending, inFlight: inFlight, maxPending: maxPending,
            waits: waits + intake.waits, pauses: pauses + intake.pauses,
            pendingBeforeStages: pendingBeforeStages + intake.pending,
            maxPendingBeforeStages: Swift.max(maxPendingBeforeStages, intake.maxPending))
    }

    /// These statistics with `more` elements waiting in front of the stages, of which at most
    /// `maxMore` ever waited at once (an observation's changes in front of its stages' intake).
    func adding(pendingBeforeStages more: Int, max maxMore: Int) -> ReceptionistStatistics {
        ReceptionistStatistics(
            received: received, delivered: delivered, dropped: dropped, discarded: discarded,
            coalesced: coalesced, pending: pending, inFlight: inFlight, maxPending: maxPending,
            waits: waits, pauses: pauses, pendingBeforeStages: pendingBeforeStages + more,
            maxPendingBeforeStages: Swift.max(maxPendingBeforeStages, maxMore))
    }

    public var description: String {
        "received \(received), delivered \(delivered), dropped \(dropped), "
            + "discarded \(discarded), coalesced \(coalesced), pending \(pending), in flight \(inFlight), max pending \(maxPending), waits \(waits), "
            + "pauses \(pauses), pending before stages \(pendingBeforeStages), "
            + "max pending before stages \(maxPendingBeforeStages)"
    }
}
