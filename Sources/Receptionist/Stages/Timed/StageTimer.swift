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
    private let state = Locked(State())

    @usableFromInline
    init(timers: StageTimers, scheduler: any DeliveryScheduler) {
        self.timers = timers
        let scheduler = timers.scheduler(for: scheduler)
        self.scheduler = scheduler
        self.rearmsLazily = (scheduler as? any StageTimerPolicy)?.rearmsStageTimersLazily ?? false
    }

    /// The scheduler's time, read for every element.
    @inlinable
    var now: SchedulerInstant { scheduler.now }

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
        guard let id = timers.arm(node, at: deadline, on: scheduler) else { return }
        state.withLock { $0.submitted = (id, deadline) }
    }
}

/// A scheduler that tells time-based stages how to treat their timers (see ``StageTimer``); a
/// scheduler that does not conform gets every arm and disarm as the stage's machine asks.
package protocol StageTimerPolicy {
    /// Whether stages keep one timer submitted and move it lazily: where a cancelled timer costs
    /// as much as one that fires.
    var rearmsStageTimersLazily: Bool { get }
}

extension QueueScheduler: StageTimerPolicy {
    /// Always: Dispatch cannot withdraw an `asyncAfter`.
    package var rearmsStageTimersLazily: Bool { true }
}

extension ManualScheduler: StageTimerPolicy {}
