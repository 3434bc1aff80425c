// The drain: the one loop that hands buffered elements to the task block, on the target.
//
// A drain is scheduled by the locked step that answered `.submitDrain` (or that let an inline
// send claim the idle engine); at most one is scheduled or running at a time (the machine's
// `isDrainScheduled`). It is in one of three states (`DrainState`). Only `.takingNext` takes
// the lock, and only to decide; what the machine decided is acted on after the lock is released.
//
// - `.claimed(element, handler)`: an inline send found the engine idle and kept its element.
//   Outside the lock, the task block runs on it → `.takingNext(returning: nil)`. If a cancel
//   came first: the machine hears of it (`drainInterrupted`) and the drain ends.
// - `.takingNext(returning: emptied)`: a gated intake without room parks here and ends, still
//   scheduled (its `DrainGate` resumes it). Under the lock: `giveBack(emptied)`, `nextSegment`,
//   the senders to wake. After it: wakes them, then, as the machine's `DrainAction` says,
//   `.deliver` → `.delivering`; `.yield` → submits a new drain and ends (an inline drain
//   without an overflow target goes on instead: `.takingNext` with a new budget); `.stop` →
//   ends, running the completions if the receptionist ended.
// - `.delivering(segment, handler)`: outside the lock, the task block on each element, with
//   the cancellation flag checked before each → `.takingNext(returning: segment)`. If a cancel
//   came first: the machine hears how many were left (`drainInterrupted`), and the drain ends,
//   releasing them.

extension DeliveryEngine where Guard: ~Copyable {
    /// Where a drain is; the transitions are listed at the top of this file.
    @usableFromInline
    enum DrainState {
        /// A sender claimed the idle inline engine (``ReceptionistStateMachine/claimOrEnqueue(_:)``):
        /// run the task block on its element, which never entered the buffer.
        case claimed(Element, Handler)
        /// Decide under the lock what comes next, giving back the segment the previous state
        /// emptied (the buffer keeps it as its spare): one lock round trip per segment.
        case takingNext(returning: BufferSegment<Element>?)
        /// Run the task block on each element of a segment taken from the buffer, outside the lock.
        case delivering(BufferSegment<Element>, Handler)
    }

    /// Runs a drain that was scheduled: what the target runs.
    @inlinable
    func drain() {
        drain(from: .takingNext(returning: nil))
    }

    /// Runs a drain from `start` until it stops, yields to a new drain, or parks.
    ///
    /// The only drain loop of the engine: every entry (a submitted drain, a claimed inline send,
    /// a drain resumed by the gate) comes here.
    @inlinable
    func drain(from start: consuming DrainState) {
        var budget = drainBudget
        // Drains never overlap, and each starts after the previous one's last store (see
        // `deliveredCount`), so this drain's count continues from there.
        var delivered = deliveredCount.load(ordering: .relaxed)
        // When this drain took its first segment (0: none yet): how long it has held the target.
        var heldSince: UInt64 = 0
        // The clock read at the end of the segment this drain delivered last, if the drain went
        // straight on to take the next (0 otherwise): the next segment is taken to have been
        // taken then, so that a drain delivering one segment after another reads the clock once
        // per segment, not twice. Between the two lies one locked step (`.takingNext` without a
        // gate or senders to wake: no task block, stage or timer fire), by which the segment's
        // wait may be understated and its first task block and the drain overstated.
        var endOfLast: UInt64 = 0
        var current = start
        while true {
            switch consume current {
            case .claimed(let element, let handler):
                if cancelledFlag.load(ordering: .acquiring) {
                    state.withLock { $0.drainInterrupted(undelivered: 1) }
                    return  // `element` and `handler` are released here, outside the lock.
                }
                assertNoLockHeld("running a task block")
                if let drainMark { drainMark.run { handler(element) } } else { handler(element) }
                delivered += 1
                deliveredCount.store(delivered, ordering: .relaxed)
                budget -= 1
                current = .takingNext(returning: nil)

            case .takingNext(let emptied):
                // A waiting pipeline's intake takes no more input than its gate allows; with no
                // room at all, the drain parks: it ends here and stays scheduled, and the gate
                // resumes it (`resumeParkedDrain`).
                var limit = budget
                if let gate {
                    // Timer fires and flushes first: they free room, so they never wait for it.
                    gate.runUrgent()
                    var room = gate.room
                    while room <= 0 {
                        if gate.park(resuming: { self.resumeParkedDrain() }) { return }
                        // Unparked itself: room came back, urgent work arrived, or it finishes.
                        gate.runUrgent()
                        room = gate.room
                    }
                    // Room is counted in weight for a weighed pipeline, which the drain cannot
                    // weigh under the lock: it takes one input per step there (within its
                    // budget, so that it still yields), so that what waits behind the stages
                    // passes the capacity by at most one input.
                    limit = Swift.min(limit, gate.weighs ? 1 : room)
                }
                // Decide, under the lock. An emptied segment the buffer does not keep (it has a
                // spare already), and the handler of a receptionist that just finished, are
                // released after it.
                let (action, wake) = state.withLockThenRelease { machine in
                    var returned = emptied
                    machine.giveBack(&returned)
                    if signalsWritability {
                        machine.noteDelivered(
                            weighs ? weighing!.delivered.load(ordering: .relaxed) : delivered,
                            heldBehind: gate?.heldPastIntake)
                    }
                    let (action, releasedHandler) = machine.nextSegment(budget: limit)
                    publishFlow(machine)
                    let wake = waits || signalsWritability ? machine.waitersToWake() : []
                    return ((action, wake), released: (returned, releasedHandler))
                }
                // Act, after it.
                for waiter in wake { waiter.wake() }
                // Waking senders and a gate's urgent work take time of their own: the next
                // segment's take is read afresh.
                if gate != nil || !wake.isEmpty { endOfLast = 0 }
                switch action {
                case .deliver(let segment, let handler):
                    current = .delivering(segment, handler)
                case .yield:
                    if let overflowTarget {
                        overflowTarget.submit { self.drain() }
                        return
                    }
                    guard drainsInline else {
                        target.submit { self.drain() }
                        return
                    }
                    // An inline drain without an overflow target goes on with a new budget.
                    budget = drainBudget
                    current = .takingNext(returning: nil)
                case .stop(let ended):
                    if ended { runCompletions() }
                    return
                }

            case .delivering(let segment, let handler):
                // No more than the budget: the state machine splits a larger segment.
                budget -= segment.count
                // Timing (ReceptionistStatistics.Timing): the clock is read per segment, not per
                // element, here (unless the previous segment's end stands for it) and in
                // `deliver`; `drainTiming` is updated here and in `deliver`.
                let taken = endOfLast != 0 ? endOfLast : clock.now()
                if heldSince == 0 { heldSince = taken }
                drainTiming.tookSegment(stampedAt: segment.startedAt, at: taken, heldSince: heldSince)
                // A waiting receptionist marks the whole segment as its drain's (one task-local
                // binding per segment, not per element).
                let outcome: (delivered: Int, end: UInt64)?
                if let drainMark {
                    var result: (delivered: Int, end: UInt64)?
                    drainMark.run {
                        result = deliver(segment, with: handler, counting: delivered, from: taken, heldSince: heldSince)
                    }
                    outcome = result
                } else {
                    outcome = deliver(segment, with: handler, counting: delivered, from: taken, heldSince: heldSince)
                }
                // Interrupted by a cancel: `segment` (with what is left in it) and `handler` are
                // released here, outside the lock.
                guard let outcome else { return }
                delivered = outcome.delivered
                endOfLast = outcome.end
                current = .takingNext(returning: segment)
            }
        }
    }

    /// Runs `handler` for each element of `segment`, counting them on from `delivered`; `start`
    /// is when the drain took the segment, `heldSince` when it took its first.
    ///
    /// Times the first task block, and every one if it watches the ``MainThreadBudget``; each
    /// timed one counts as running (``DrainTiming``) until it returns. Ends the segment's timing
    /// (how long the drain has held the target; with it, in one update, a timed task block that
    /// was the segment's last, so that a segment of one change costs two updates, not three),
    /// also when a cancel interrupts it: before the machine hears of that, so that the drain's
    /// last update comes before the step that ends it.
    ///
    /// - Returns: the count after the last element and the clock read at the segment's end, or
    ///   `nil` if a cancel interrupted the segment (the machine heard of it). A method, not a local function
    ///   of the drain: a local function that captured the drain's variables made the compiler box
    ///   them, two allocations per drain. The count is passed and returned, not `inout`: the
    ///   drain's own count then stays in a register instead of memory the closure of a marked
    ///   drain could reach.
    @inlinable
    func deliver(
        _ segment: BufferSegment<Element>, with handler: Handler, counting delivered: Int, from start: UInt64,
        heldSince: UInt64
    ) -> (delivered: Int, end: UInt64)? {
        var delivered = delivered
        // 0 unless a main-thread budget is set and this drain runs on the main thread.
        let budget = watchesMainThreadBudget ? MainThreadBudget.nanoseconds : 0
        var blockStart = start
        var timesNext = true
        var end = start
        // A timed task block that was the segment's last (at least 1 ns; 0: none), recorded with
        // the segment's end.
        var lastTook: UInt64 = 0
        // The update (its odd sequence number; 0: none) begun when that block returned, left open
        // for the segment's end: the loop ends right after it, and no user code runs in between.
        var openUpdate = 0
        while !segment.isEmpty {
            if cancelledFlag.load(ordering: .acquiring) {
                // The drain held the target until now (read inside the update: see below).
                let odd = drainTiming.beginUpdate()
                drainTiming.recordSegmentEnded(heldFor: clock.now() &- heldSince)
                drainTiming.endUpdate(odd)
                let undelivered = segment.count
                state.withLock { $0.drainInterrupted(undelivered: undelivered) }
                return nil
            }
            assertNoLockHeld("running a task block")
            // Moved out first, so that the element is released right after its task block.
            let element = segment.removeFirst()
            handler(element)
            delivered += 1
            deliveredCount.store(delivered, ordering: .relaxed)
            // A paused producer goes on once the level is down to the low watermark.
            if signalsWritability, delivered >= resumeAt.load(ordering: .relaxed) {
                reachedResumeThreshold(delivered: delivered)
            }
            if timesNext {
                // The clock is read inside the update that records the task block: a snapshot
                // taken meanwhile shows the block as still running, at most until then, so it
                // never shows it longer than it is recorded (read before the update, a drain
                // preempted between the two let a snapshot show a 16 ms block recorded as 4 ms).
                let odd = drainTiming.beginUpdate()
                end = clock.now()
                let took = end &- blockStart
                if budget != 0, took > budget {
                    drainTiming.recordTaskBlock(took: took, nextSince: 0)
                    drainTiming.endUpdate(odd)
                    MainThreadBudget.report(took: took, budget: budget, element: Element.self)
                    // The report's own time is not the next task block's.
                    end = clock.now()
                    if !segment.isEmpty { drainTiming.taskBlockTimed(since: end) }
                } else if segment.isEmpty {
                    // The segment's last: recorded with its end, in this same update.
                    lastTook = Swift.max(took, 1)
                    openUpdate = odd
                } else {
                    drainTiming.recordTaskBlock(took: took, nextSince: budget != 0 ? end : 0)
                    drainTiming.endUpdate(odd)
                }
                blockStart = end
                timesNext = budget != 0
            }
        }
        if openUpdate == 0 {
            // The last task block ran untimed, or over the main-thread budget (then the report
            // ran since): the segment's end is read now, inside its update.
            openUpdate = drainTiming.beginUpdate()
            end = clock.now()
        }
        drainTiming.recordSegmentEnded(heldFor: end &- heldSince, lastTaskBlockTook: lastTook)
        drainTiming.endUpdate(openUpdate)
        return (delivered, end)
    }

    /// Resumes a drain that its ``gate`` parked, on the engine's target (a waiting pipeline's
    /// intake drains on the stage queue), never on the thread that made the room.
    ///
    /// Inlinable, so that the drain it submits is the specialised one: not inlinable, it ran the
    /// generic drain, which looks up metadata at run time for every element, from each resume
    /// until the drain parked or ended again.
    @inlinable
    func resumeParkedDrain() {
        precondition(!drainsInline, "Internal inconsistency: a gated drain must not run on the thread that resumes it")
        target.submit { self.drain() }
    }
}
