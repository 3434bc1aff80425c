/// The timer of one time-based stage: its scheduler, the timer its state machine wants, and the
/// one timer submitted to the scheduler for it.
///
/// ## Lazy re-arming
/// On a ``QueueScheduler`` a timer is an `asyncAfter`, which Dispatch cannot withdraw: a
/// cancelled timer still wakes a thread at its deadline, only to find it has nothing to do. A
/// `batch(count: 512, every: .milliseconds(20))` that fills by count every 50 µs would arm (and
/// cancel) a timer per batch, and pay a stale wake-up per batch 20 ms later. So on a
/// `QueueScheduler` the stage keeps at most one timer submitted and moves it lazily:
/// - arming for a deadline at or after the submitted timer's only notes the wanted deadline;
///   arming for an earlier one submits a timer for it (and cancels the other);
/// - disarming only forgets the wanted deadline;
/// - when the submitted timer fires (as an event of the pipeline's intake, in order with the
///   elements), ``fired(_:for:)`` fires the machine if the wanted deadline has come (at or
///   before the submitted one), or submits a timer for the wanted deadline, or does nothing.
///
/// The machine sees exactly the fires it would see with eager timers, at the same deadlines; only
/// the scheduler sees fewer timers (one per interval instead of one per batch).
///
/// On other schedulers every arm and disarm is submitted and cancelled as asked: a
/// ``ManualScheduler``'s ``ManualScheduler/pendingCount`` and ``ManualScheduler/nextDeadline``
/// then show exactly the timer the stage wants (tests read them). Tests make a manual scheduler
/// re-arm lazily too (`ManualScheduler(rearmingStageTimersLazily:)`) to check that both ways give
/// the same outputs.
///
/// ## Reading the clock
/// On a ``QueueScheduler``, an element of `batch` or `throttle` reads the clock only when its
/// machine needs the time (``TimedStateMachine/needsTime(after:)``): to open a batch or window,
/// or when the open one's deadline has passed. Whether it has passed, the stage knows without a
/// read: each timer tells its stage, as it starts on the scheduler (never before its deadline),
/// that the clock reached its deadline (``reached``). So an element that the stages take after
/// the timer started, but before its fire reaches them (the intake busy with other elements),
/// is handled as a late timer, as before; one taken between the deadline and the timer's start
/// (the scheduler's latency, microseconds on an idle machine) joins the window, as it would have
/// if the timer had started at its deadline. Other schedulers (a ``ManualScheduler``, where time
/// moves only when a test moves it) keep a read per element and the exact boundary:
/// `StageClockReadTests` runs the lazy reads on a manual clock and compares them with exact ones.
///
/// Threading: ``perform(_:for:)`` and ``fired(_:for:)`` run in the pipeline's intake (one event
/// at a time, see ``StagedPipeline``); the lock is uncontended and lets the compiler check that
/// the timer is `Sendable`.
@usableFromInline
final class StageTimer: Sendable {
    private struct State {
        /// What the machine asked for: fire `generation` at `deadline`. `nil`: disarmed.
        var wanted: (deadline: SchedulerInstant, generation: Int)?
        /// The timer submitted to the scheduler (its ``StageTimers`` identifier and deadline) that
        /// has neither fired nor been cancelled.
        var submitted: (id: Int, deadline: SchedulerInstant)?
    }

    @usableFromInline let timers: StageTimers
    @usableFromInline let scheduler: any DeliveryScheduler
    /// Whether arming later and disarming leave the submitted timer in place (see above).
    private let rearmsLazily: Bool
    /// Whether an element reads the clock only when its machine needs it (see "Reading the
    /// clock" above).
    @usableFromInline let readsClockLazily: Bool
    private let state = Locked(State())

    @usableFromInline
    init(timers: StageTimers, scheduler: any DeliveryScheduler) {
        self.timers = timers
        let scheduler = timers.scheduler(for: scheduler)
        self.scheduler = scheduler
        let policy = scheduler as? any StageTimerPolicy
        self.rearmsLazily = policy?.rearmsStageTimersLazily ?? false
        self.readsClockLazily = policy?.readsStageClockLazily ?? false
    }

    /// How far the scheduler's clock is known to have come, in nanoseconds of its offset (rounded
    /// down): the latest deadline at which one of this stage's timers ran on the scheduler, which
    /// never runs work before its deadline (``DeliveryScheduler/submit(at:_:)``). `Int.min`:
    /// none yet. Set on the scheduler's thread, read by the intake: an atomic.
    @usableFromInline let reachedNanoseconds = AtomicValue<Int>(Int.min)

    /// The scheduler's time. Read for an element only when its machine needs it (see
    /// ``TimedStateMachine/needsTime(after:)``), and for timer fires, flushes and the finish.
    @inlinable
    var now: SchedulerInstant { scheduler.now }

    /// A time the scheduler's clock is known to have reached (``reachedNanoseconds``), without
    /// reading the clock: enough for an element whose machine only compares the time with a
    /// deadline of its own.
    @inlinable
    var reached: SchedulerInstant {
        SchedulerInstant(offset: .nanoseconds(reachedNanoseconds.load(ordering: .relaxed)))
    }

    /// One of this stage's timers, due at `deadline`, is running on the scheduler: its clock has
    /// reached `deadline`.
    func clockReached(_ deadline: SchedulerInstant) {
        let nanoseconds = deadline.offset.nanosecondsRoundedDown
        var known = reachedNanoseconds.load(ordering: .relaxed)
        while known < nanoseconds {
            let (exchanged, original) = reachedNanoseconds.compareExchange(
                expected: known, desired: nanoseconds, ordering: .relaxed)
            if exchanged { return }
            known = original
        }
    }

    /// Performs what the stage's state machine asked of its timer.
    @usableFromInline
    func perform(_ action: TimerAction, for node: any TimedStageNode) {
        let (cancelled, submit): (Int?, SchedulerInstant?)
        switch action {
        case .none:
            return
        case .arm(let deadline, let generation):
            (cancelled, submit) = state.withLock { state in
                state.wanted = (deadline, generation)
                if rearmsLazily, let submitted = state.submitted, submitted.deadline <= deadline {
                    return (nil, nil)  // it fires first, and then moves on to `deadline`
                }
                return (state.submitted.take()?.id, deadline)
            }
        case .disarm:
            cancelled = state.withLock { state in
                state.wanted = nil
                return rearmsLazily ? nil : state.submitted.take()?.id
            }
            submit = nil
        }
        if let cancelled { timers.disarm(cancelled) }
        if let submit { self.submit(at: submit, for: node) }
    }

    /// The submitted timer `id` fired: the generation to fire the machine with, if its wanted
    /// deadline has come; otherwise `nil`, after submitting a timer for the wanted deadline if
    /// there is one.
    @usableFromInline
    func fired(_ id: Int, for node: any TimedStageNode) -> Int? {
        let (generation, resubmit): (Int?, SchedulerInstant?) = state.withLock { state in
            // A timer cancelled while it was already starting is not the submitted one.
            guard let submitted = state.submitted, submitted.id == id else { return (nil, nil) }
            state.submitted = nil
            guard let wanted = state.wanted else { return (nil, nil) }
            guard wanted.deadline <= submitted.deadline else { return (nil, wanted.deadline) }
            state.wanted = nil
            return (wanted.generation, nil)
        }
        if let resubmit { submit(at: resubmit, for: node) }
        return generation
    }

    private func submit(at deadline: SchedulerInstant, for node: any TimedStageNode) {
        // Recorded after the scheduler has it: its fire is an event of the intake, which runs
        // after the event that submitted it (this one) has finished.
        guard let id = timers.arm(node, at: deadline, on: scheduler, reaching: self) else { return }
        state.withLock { $0.submitted = (id, deadline) }
    }
}

/// A scheduler that tells time-based stages how to treat their timers (see ``StageTimer``); a
/// scheduler that does not conform gets every arm and disarm as the stage's machine asks.
package protocol StageTimerPolicy {
    /// Whether stages keep one timer submitted and move it lazily: where a cancelled timer costs
    /// as much as one that fires.
    var rearmsStageTimersLazily: Bool { get }
    /// Whether stages read the clock only for the elements that need it (see ``StageTimer``,
    /// "Reading the clock"): where a read costs, and the boundary of a window is blurred by the
    /// timer's own latency anyway. `false` by default. A scheduler that answers `true` promises
    /// that ``DeliveryScheduler/now`` runs no user code: a stage reads it under its lock.
    var readsStageClockLazily: Bool { get }
}

extension StageTimerPolicy {
    package var readsStageClockLazily: Bool { false }
}

extension QueueScheduler: StageTimerPolicy {
    /// Always: Dispatch cannot withdraw an `asyncAfter`.
    package var rearmsStageTimersLazily: Bool { true }

    /// Always: reading the uptime clock is the dearest step of an element that joins a batch or
    /// a throttle's window.
    package var readsStageClockLazily: Bool { true }
}

extension ManualScheduler: StageTimerPolicy {}

extension Duration {
    /// This duration in whole nanoseconds, rounded towards negative infinity, clamped to `Int`.
    var nanosecondsRoundedDown: Int {
        // Compared first: `components` traps beyond `Int64` seconds (a stage's longest interval
        // added to an instant).
        let limit = Int64(Int.max / 1_000_000_000) - 1
        guard self < .seconds(limit) else { return .max }
        guard self > .seconds(-limit) else { return .min }
        let (seconds, attoseconds) = components
        // `components` truncates towards zero: attoseconds have the sign of the duration.
        var nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        if attoseconds % 1_000_000_000 < 0 { nanoseconds -= 1 }
        return nanoseconds
    }
}
