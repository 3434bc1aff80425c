/// What a receptionist's drains measured for ``ReceptionistStatistics/Timing``: written by the
/// drain outside the lock, read by ``DeliveryEngine/statistics`` on any thread as one record, so
/// that the figures of a snapshot were all true at one moment (issue 41, item 5).
///
/// A sequence lock with one writer, the drain: drains never overlap (the state machine schedules
/// one at a time, and each starts after the previous one's last locked step, which that drain
/// took after its last update here), so an update needs no read-modify-write.
/// - The writer makes ``sequence`` odd, stores the figures that change, and makes it even again.
/// - A reader reads ``sequence``, the figures and the clock, then ``sequence`` again, and tries
///   again if the two differ or are odd: no update overlapped its reads.
/// - Every field is an ``AtomicValue`` (so nothing is a data race). The figures are stored with
///   release, after the odd ``sequence``, and read with acquire: a reader that sees a figure of
///   an update sees at least that update's odd ``sequence`` on its second read, and tries again.
///   The even ``sequence`` is stored with release and read with acquire: a reader that sees it
///   sees every figure of the updates before it.
///
/// No user code runs inside an update (``MainThreadBudget``'s report runs between two), so a
/// task block that reads its own receptionist's statistics never waits for its own drain. A
/// drain updates at most three times per segment (when it takes it, after its first task block
/// unless that was its last, when it is done); with ``MainThreadBudget`` on, after every task
/// block, beside the clock read it makes there anyway. Never once per change otherwise. It reads
/// the clock for the first two and for the last only if its last task block was not timed; a
/// segment taken straight after another, in the same drain, takes that one's end as its start.
///
/// The clock read that ends a task block or a segment is made inside the update that records it
/// (after ``beginUpdate()``): a snapshot taken before shows the block or the drain as running
/// until its own clock read, which comes before the drain's, so a longest figure never shrinks
/// from one snapshot to the next (read before the update, a drain preempted between the read and
/// the update let a snapshot show a task block running for 16 ms that was then recorded as 4 ms).
@usableFromInline
struct DrainTiming: ~Copyable, Sendable {
    /// Odd while the drain updates the figures; one more than before after each update.
    @usableFromInline
    let sequence = AtomicValue<Int>(0)
    /// The figures (nanoseconds; 0: nothing yet): see ``ReceptionistStatistics/Timing``.
    @usableFromInline
    let lastWait = AtomicValue<Int>(0)
    @usableFromInline
    let longestWait = AtomicValue<Int>(0)
    @usableFromInline
    let longestTaskBlock = AtomicValue<Int>(0)
    @usableFromInline
    let longestDrain = AtomicValue<Int>(0)
    /// When the timed task block that runs now started (a ``DeliveryClock`` time); 0 when none
    /// runs, or the one that runs is not timed.
    @usableFromInline
    let taskBlockSince = AtomicValue<Int>(0)
    /// When the drain that delivers a segment now took its first one (a ``DeliveryClock`` time);
    /// 0 when no drain is delivering a segment.
    @usableFromInline
    let drainSince = AtomicValue<Int>(0)

    @usableFromInline
    init() {}

    /// A drain that has held its target since `heldSince` took, at `now`, a segment buffered
    /// since `startedAt` (0: not stamped): records the wait of its oldest element; the drain and
    /// the segment's first task block, which starts now, run from here.
    @inlinable
    func tookSegment(stampedAt startedAt: UInt64, at now: UInt64, heldSince: UInt64) {
        let odd = beginUpdate()
        if startedAt != 0 {
            // At least 1 ns, so that a wait shows even on a clock that did not move (0 means none);
            // `now` may precede the stamp by one locked step when it is the end of the drain's
            // previous segment (see `DeliveryEngine.drain(from:)`).
            let wait = Swift.max(1, now > startedAt ? Int(truncatingIfNeeded: now &- startedAt) : 0)
            lastWait.store(wait, ordering: .releasing)
            if wait > longestWait.load(ordering: .relaxed) { longestWait.store(wait, ordering: .releasing) }
        }
        drainSince.store(Int(truncatingIfNeeded: heldSince), ordering: .releasing)
        taskBlockSince.store(Int(truncatingIfNeeded: now), ordering: .releasing)
        endUpdate(odd)
    }

    /// Within an update (``beginUpdate()``, whose caller read the clock after it): a timed task
    /// block returned after `took` nanoseconds; the next one is timed from `nextSince` (0: it is
    /// not timed, or there is none).
    @inlinable
    func recordTaskBlock(took: UInt64, nextSince: UInt64) {
        keepLongest(took, in: longestTaskBlock)
        taskBlockSince.store(Int(truncatingIfNeeded: nextSince), ordering: .releasing)
    }

    /// The next task block is timed from `since` (after a ``MainThreadBudget`` report, whose
    /// own time counts for no task block).
    @inlinable
    func taskBlockTimed(since: UInt64) {
        let odd = beginUpdate()
        taskBlockSince.store(Int(truncatingIfNeeded: since), ordering: .releasing)
        endUpdate(odd)
    }

    /// Within an update (``beginUpdate()``, whose caller read the clock after it): the drain is
    /// done with its segment (delivered, or interrupted by a cancel), having held its target for
    /// `heldFor` nanoseconds so far; `lastTaskBlockTook`: the segment's last task block, timed and
    /// not recorded yet (0: none).
    @inlinable
    func recordSegmentEnded(heldFor: UInt64, lastTaskBlockTook: UInt64 = 0) {
        if lastTaskBlockTook != 0 { keepLongest(lastTaskBlockTook, in: longestTaskBlock) }
        keepLongest(heldFor, in: longestDrain)
        drainSince.store(0, ordering: .releasing)
        taskBlockSince.store(0, ordering: .releasing)
    }

    @inlinable
    func beginUpdate() -> Int {
        let odd = sequence.load(ordering: .relaxed) &+ 1
        sequence.store(odd, ordering: .relaxed)
        return odd
    }

    @inlinable
    func endUpdate(_ odd: Int) {
        sequence.store(odd &+ 1, ordering: .releasing)
    }

    /// Within an update: `nanoseconds` (at least 1) into `record` if it is longer.
    @inlinable
    func keepLongest(_ nanoseconds: UInt64, in record: borrowing AtomicValue<Int>) {
        let value = Swift.max(1, Int(truncatingIfNeeded: nanoseconds))
        if value > record.load(ordering: .relaxed) { record.store(value, ordering: .releasing) }
    }

    /// The figures of one moment, and `clock`'s time at that moment (nanoseconds; 0: nothing).
    /// A timed task block and a drain still running count in the longest as long as they have
    /// run by then.
    func read(_ clock: DeliveryClock) -> (
        now: UInt64, lastWait: Int, longestWait: Int, longestTaskBlock: Int, longestDrain: Int
    ) {
        while true {
            let before = sequence.load(ordering: .acquiring)
            // An update is under way: it stores a few words and no user code runs in it.
            if before & 1 != 0 { continue }
            let last = lastWait.load(ordering: .acquiring)
            let longest = longestWait.load(ordering: .acquiring)
            var taskBlock = longestTaskBlock.load(ordering: .acquiring)
            var drain = longestDrain.load(ordering: .acquiring)
            let blockSince = UInt64(truncatingIfNeeded: taskBlockSince.load(ordering: .acquiring))
            let heldSince = UInt64(truncatingIfNeeded: drainSince.load(ordering: .acquiring))
            let now = clock.now()
            guard sequence.load(ordering: .relaxed) == before else { continue }
            func running(since start: UInt64) -> Int {
                start == 0 ? 0 : Swift.max(1, now > start ? Int(truncatingIfNeeded: now - start) : 0)
            }
            taskBlock = Swift.max(taskBlock, running(since: blockSince))
            drain = Swift.max(drain, running(since: heldSince))
            return (now, last, longest, taskBlock, drain)
        }
    }
}
