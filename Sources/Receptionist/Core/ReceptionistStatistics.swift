/// Counters that account for every change a receptionist was given.
///
/// Read them with ``DeliveryHandle/statistics`` (on a ``Receptionist``, an ``ObservationToken``
/// or a ``Hub/Subscription``). A snapshot's counters are taken under the receptionist's lock (its
/// ``timing`` right after, see ``Timing``), and every snapshot satisfies
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
///
/// How late delivery runs is in ``timing``: how long the oldest change not yet delivered has
/// waited, how long changes waited before their task block, and how long task blocks and drains
/// ran (or have run, if one runs now).
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
    /// How late delivery runs: the age of the oldest waiting change, how long delivered changes
    /// waited, the longest task block and drain. See ``Timing`` for what is measured and when.
    public let timing: Timing

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
        maxPendingBeforeStages: Int = 0,
        timing: Timing = Timing()
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
        self.timing = timing
    }

    /// These statistics with `timing` instead of theirs.
    func with(timing: Timing) -> ReceptionistStatistics {
        ReceptionistStatistics(
            received: received, delivered: delivered, dropped: dropped, discarded: discarded,
            coalesced: coalesced, pending: pending, inFlight: inFlight, maxPending: maxPending,
            waits: waits, pauses: pauses, pendingBeforeStages: pendingBeforeStages,
            maxPendingBeforeStages: maxPendingBeforeStages, timing: timing)
    }

    /// These statistics (a pipeline's delivery's) with what its intake, in front of the stages,
    /// adds: its senders' waits and pauses, and what waits there.
    func adding(intake: ReceptionistStatistics) -> ReceptionistStatistics {
        ReceptionistStatistics(
            received: received, delivered: delivered, dropped: dropped, discarded: discarded,
            coalesced: coalesced, pending: pending, inFlight: inFlight, maxPending: maxPending,
            waits: waits + intake.waits, pauses: pauses + intake.pauses,
            pendingBeforeStages: pendingBeforeStages + intake.pending,
            maxPendingBeforeStages: Swift.max(maxPendingBeforeStages, intake.maxPending),
            timing: timing.adding(beforeStages: intake.timing))
    }

    /// These statistics with `more` elements waiting in front of the stages, of which at most
    /// `maxMore` ever waited at once (an observation's changes in front of its stages' intake).
    /// `beforeStages` is the timing of that queue.
    func adding(pendingBeforeStages more: Int, max maxMore: Int, timing beforeStages: Timing) -> ReceptionistStatistics
    {
        ReceptionistStatistics(
            received: received, delivered: delivered, dropped: dropped, discarded: discarded,
            coalesced: coalesced, pending: pending, inFlight: inFlight, maxPending: maxPending,
            waits: waits, pauses: pauses, pendingBeforeStages: pendingBeforeStages + more,
            maxPendingBeforeStages: Swift.max(maxPendingBeforeStages, maxMore),
            timing: timing.adding(beforeStages: beforeStages))
    }

    public var description: String {
        "received \(received), delivered \(delivered), dropped \(dropped), "
            + "discarded \(discarded), coalesced \(coalesced), pending \(pending), in flight \(inFlight), max pending \(maxPending), waits \(waits), "
            + "pauses \(pauses), pending before stages \(pendingBeforeStages), "
            + "max pending before stages \(maxPendingBeforeStages), \(timing)"
    }
}

extension ReceptionistStatistics {
    /// How late delivery runs: how long changes wait before their task block, and how long task
    /// blocks and drains run, counting one that is running (or stalled) now.
    ///
    /// Cheap enough to leave on, so always on: the clock is read per buffer *segment* (up to 256
    /// changes that wait together), not per change. A sender that starts a segment stamps it
    /// (under the receptionist's lock); a drain reads the clock when it takes a segment, after its
    /// first task block and after its last, and a drain that goes from one segment straight to the
    /// next takes the end of the one as the start of the other (one locked step lies between them,
    /// with no task block, stage or timer fire in it). In a flood that is a few reads per 256
    /// changes. When every change is a segment of its own (changes one at a time, a coalescing
    /// buffer, a capacity of 1), it is two reads per change while a drain keeps going, and three
    /// for a change that is a burst of its own, next to the hop to the target such a change costs
    /// anyway (Benchmarks/README.md, "Flow control", has the rows). So:
    /// - ages and waits are those of the *oldest* change of a segment, and a change is taken to
    ///   have waited since its segment started to fill (overstated by at most the time a segment
    ///   takes to fill); a segment taken straight after another counts as taken when that one
    ///   ended (its wait understated, its first task block and the drain overstated, by at most
    ///   the drain's locked step between the two);
    /// - ``oldestPendingAge`` counts what waits in the buffer *and* the segment a drain has taken
    ///   until its last task block returned: the changes taken and not yet handed to their task
    ///   block, and the task block in progress. A stalled task block shows there, growing, while
    ///   it is stalled. Per segment: the age is that of the segment's oldest change even once that
    ///   change was delivered, until the whole segment was;
    /// - ``longestTaskBlock`` is the longest of the task blocks timed (the first of each segment:
    ///   every one when changes arrive one at a time, one in up to 256 in a flood), and
    ///   ``longestDrain`` the longest a drain held its target; each counts the one still running
    ///   for as long as it has run by the snapshot. A stalled task block that is the first of its
    ///   segment shows in both while it is stalled; one in the middle of a burst shows in
    ///   ``longestDrain`` (and in ``oldestPendingAge``), and in `longestTaskBlock` only where
    ///   ``MainThreadBudget`` times every task block (on the main queue and main actor, while it is
    ///   on);
    /// - a change that an idle ``DeliveryTarget/immediate`` receptionist runs at once, on the
    ///   sending thread, never waits and is not timed, not even while its task block runs.
    ///
    /// One moment: the drain publishes its figures as one record, which a snapshot copies whole
    /// (trying again if it caught the drain writing it: a few stores, no user code), with the
    /// clock read at that moment; the running task block and drain (each counts as running until
    /// the drain has published its end, right after it), and ``oldestPendingAge``, are measured at
    /// that reading. So ``lastWait`` and ``longestWait`` are both set or both `nil`,
    /// `lastWait <= longestWait`, and a timed task block is never longer than the longest drain:
    /// `longestTaskBlock <= longestDrain`. The counters beside `timing` (`pending`, `delivered`, …)
    /// and the stamp of the oldest undelivered change are read just before, under the
    /// receptionist's lock; a drain that runs between the two reads can make them differ by what
    /// it did meanwhile (a `lastWait` for a segment the counters still show as `pending`).
    ///
    /// With stages, ``oldestPendingAge`` is the older of the oldest change in front of the stages
    /// (waiting for them, or taken by the drain that runs them and not yet through them, the one
    /// in them included: per segment, as above) and the oldest output behind them. ``lastWait``
    /// adds the last wait in front of the stages to the last wait behind them, and
    /// ``longestWait`` the longest in front to the longest behind (an upper bound: the two need
    /// not be one change's); neither counts the time inside the stages (a batch window, a
    /// throttle's interval). ``longestTaskBlock`` and ``longestDrain`` are those of the task block
    /// behind the stages. The two sides are read one after the other, each at a moment of its
    /// own. All `nil` until there is something to measure.
    public struct Timing: Sendable, Hashable, CustomStringConvertible {
        /// How long the oldest change not yet delivered has waited, at the snapshot: in the buffer,
        /// or taken by a drain whose segment is not delivered yet, its task block perhaps running
        /// (in front of a pipeline's stages or behind them); `nil` when nothing waits.
        public let oldestPendingAge: Duration?
        /// How long the oldest change of the last delivered segment waited, from being buffered
        /// until a drain took it for its task block.
        public let lastWait: Duration?
        /// The longest ``lastWait`` so far (with stages, see above).
        public let longestWait: Duration?
        /// The longest task block timed so far, the timed one still running included for as long
        /// as it has run (see above for which are timed).
        public let longestTaskBlock: Duration?
        /// The longest time a drain ran task blocks back to back without giving its target back
        /// (up to its budget of 256 task blocks; on ``DeliveryTarget/immediate``, the whole burst
        /// it ran on the sending thread), the drain still delivering included for as long as it
        /// has held its target: on the main queue, how long the main thread was held at once.
        public let longestDrain: Duration?

        init(
            oldestPendingAge: Duration? = nil,
            lastWait: Duration? = nil,
            longestWait: Duration? = nil,
            longestTaskBlock: Duration? = nil,
            longestDrain: Duration? = nil
        ) {
            self.oldestPendingAge = oldestPendingAge
            self.lastWait = lastWait
            self.longestWait = longestWait
            self.longestTaskBlock = longestTaskBlock
            self.longestDrain = longestDrain
        }

        /// This timing (behind a pipeline's stages) with that of the queue in front of them.
        func adding(beforeStages front: Timing) -> Timing {
            Timing(
                oldestPendingAge: Self.larger(oldestPendingAge, front.oldestPendingAge),
                lastWait: Self.sum(lastWait, front.lastWait),
                longestWait: Self.sum(longestWait, front.longestWait),
                longestTaskBlock: longestTaskBlock,
                longestDrain: longestDrain)
        }

        private static func larger(_ a: Duration?, _ b: Duration?) -> Duration? {
            guard let a else { return b }
            guard let b else { return a }
            return Swift.max(a, b)
        }

        private static func sum(_ a: Duration?, _ b: Duration?) -> Duration? {
            guard let a else { return b }
            guard let b else { return a }
            return a + b
        }

        public var description: String {
            func text(_ duration: Duration?) -> String { duration.map { "\($0)" } ?? "-" }
            return "oldest pending age \(text(oldestPendingAge)), last wait \(text(lastWait)), "
                + "longest wait \(text(longestWait)), longest task block \(text(longestTaskBlock)), "
                + "longest drain \(text(longestDrain))"
        }
    }
}
