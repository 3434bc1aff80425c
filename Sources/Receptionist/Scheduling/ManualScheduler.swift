/// A scheduler whose clock moves only when a test says so: runs time-based pipelines
/// deterministically, with no threads, sleeps or timing.
///
/// ``now`` starts at ``SchedulerInstant/zero``. Submitted work waits until the test calls
/// ``run()``, ``advance(by:)`` or ``advance(to:)``, which run the work that falls due, in deadline
/// order, on the calling thread:
///
/// ```swift
/// let scheduler = ManualScheduler()
/// scheduler.submit(at: scheduler.now + .seconds(1)) { print("one second") }
/// scheduler.submit { print("now") }
///
/// scheduler.run()                              // prints "now"
/// scheduler.advance(by: .milliseconds(999))    // prints nothing
/// scheduler.advance(by: .milliseconds(1))      // prints "one second"
/// ```
///
/// This follows swift-nio's `EmbeddedEventLoop.advanceTime(by:)` and OpenCombine's
/// `VirtualTimeScheduler`.
///
/// Threading: every method may be called from any thread. Work runs synchronously, one item at a
/// time, on the thread that called ``run()``, ``advance(by:)`` or ``advance(to:)``, with no
/// internal lock held, so work may submit more work, cancel work, and read ``now``. Only one
/// advance may run at a time: calling ``run()``, ``advance(by:)`` or ``advance(to:)`` from inside
/// a work item, or from another thread while an advance is running, stops the program with a
/// precondition failure.
public final class ManualScheduler: DeliveryScheduler {
    private let timeline = Locked(ManualSchedulerTimeline<ScheduledWork>())

    /// A scheduler whose ``now`` is ``SchedulerInstant/zero`` and that has no pending work.
    public init() {
        rearmsStageTimersLazily = false
    }

    /// Test hook: a scheduler on which time-based stages keep one timer submitted and move it
    /// lazily, as they do on a ``QueueScheduler`` (see `StageTimer`), so that tests can check
    /// that both ways give the same outputs.
    package init(rearmingStageTimersLazily: Bool) {
        rearmsStageTimersLazily = rearmingStageTimersLazily
    }

    /// Whether time-based stages re-arm their timers lazily on this scheduler (`false` but for
    /// the test hook above): then ``pendingCount`` and ``nextDeadline`` show exactly the timers
    /// the stages want.
    package let rearmsStageTimersLazily: Bool

    /// The scheduler's current time: ``SchedulerInstant/zero`` at first, moved only by
    /// ``advance(by:)`` and ``advance(to:)``.
    ///
    /// While a work item runs, `now` is that item's deadline (or the time it was reached, if
    /// the item was submitted for an instant already past). Safe to read from any thread.
    public var now: SchedulerInstant {
        timeline.withLock { $0.now }
    }

    /// Queues `work` to run at the current time, at the next ``run()`` or advance.
    ///
    /// Nothing runs inside this call. Work submitted for the same instant runs in submission
    /// order. Callable from any thread, also from inside a running work item: the work then
    /// runs during the same advance, after the work already due.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        submit(at: now, work)
    }

    /// Queues `work` to run once the clock reaches `deadline`, at the advance that reaches it.
    ///
    /// Nothing runs inside this call; a deadline already past makes the work due at the next
    /// ``run()`` or advance. Work runs in deadline order, and in submission order for equal
    /// deadlines. Callable from any thread, also from inside a running work item.
    ///
    /// - Parameters:
    ///   - deadline: the instant at which `work` becomes due.
    ///   - work: the work to run, on the thread that advances the scheduler.
    /// - Returns: a handle that cancels the work if it has not started.
    @discardableResult
    public func submit(
        at deadline: SchedulerInstant,
        _ work: @escaping @Sendable () -> Void
    ) -> ScheduledWork {
        let scheduled = ScheduledWork(work)
        timeline.withLock { $0.schedule(scheduled, at: deadline) }
        return scheduled
    }

    /// The number of work items submitted and neither run nor cancelled.
    ///
    /// A snapshot: other threads may submit or cancel work meanwhile.
    public var pendingCount: Int {
        pendingDeadlines.count
    }

    /// The earliest deadline of the work submitted and neither run nor cancelled; `nil` if there
    /// is none.
    ///
    /// A snapshot: other threads may submit or cancel work meanwhile.
    public var nextDeadline: SchedulerInstant? {
        pendingDeadlines.min()
    }

    /// Runs the work that is due now, without moving the clock: `advance(by: .zero)`.
    ///
    /// Also runs work submitted for the current time by the work it runs. Must not be called
    /// while an advance is running (see ``ManualScheduler``).
    public func run() {
        advance(by: .zero, caller: "run()")
    }

    /// Moves the clock forward by `duration`, running the work that falls due on the way.
    ///
    /// Runs due work on the calling thread, in deadline order and in submission order for
    /// equal deadlines, setting ``now`` to each item's deadline before running it. Work submitted
    /// meanwhile (by the running work or by other threads) runs too if its deadline is at or
    /// before the target; later work stays pending. Finally ``now`` becomes the target,
    /// `now + duration` as of the call. Must not be called while an advance is running (see
    /// ``ManualScheduler``).
    ///
    /// - Parameter duration: how far to move the clock; must not be negative.
    public func advance(by duration: Duration) {
        advance(by: duration, caller: "advance(by:)")
    }

    /// Moves the clock forward to `target`, running the work that falls due on the way.
    ///
    /// Runs due work exactly as ``advance(by:)`` does; finally ``now`` becomes `target`. Must not
    /// be called while an advance is running (see ``ManualScheduler``).
    ///
    /// - Parameter target: the instant to move the clock to; must not be before ``now``.
    public func advance(to target: SchedulerInstant) {
        let rejection = timeline.withLock { $0.startAdvancing(to: target) }
        switch rejection {
        case nil:
            runUntilFinished()
        case .targetBeforeNow(let now):
            // fatalError, not preconditionFailure: its message is printed in release builds too.
            fatalError(
                "ManualScheduler.advance(to:): target must not be before now (\(now)), got \(target)"
            )
        case .alreadyAdvancing:
            invalidConfiguration(Self.reentrancyMessage(caller: "advance(to:)"))
        case .negativeDuration:
            preconditionFailure("Internal inconsistency: advance(to:) rejected for a negative duration")
        }
    }

    private func advance(by duration: Duration, caller: String) {
        let rejection = timeline.withLock { $0.startAdvancing(by: duration) }
        switch rejection {
        case nil:
            runUntilFinished()
        case .negativeDuration:
            fatalError(  // printed in release builds too, unlike preconditionFailure's message
                "ManualScheduler.\(caller): duration must not be negative, got \(duration)"
            )
        case .alreadyAdvancing:
            invalidConfiguration(Self.reentrancyMessage(caller: caller))
        case .targetBeforeNow(let now):
            preconditionFailure(
                "Internal inconsistency: \(caller) by \(duration) rejected as before now (\(now))"
            )
        }
    }

    /// Takes the next due item under the lock and runs it outside, until none is due.
    private func runUntilFinished() {
        while case .run(let work) = timeline.withLock({ $0.nextDue() }) {
            work.run()
        }
    }

    private var pendingDeadlines: [SchedulerInstant] {
        // Cancellation state lives in each handle's own lock: read it after releasing ours.
        timeline.withLock { $0.scheduled }
            .filter { !$0.work.isCancelled }
            .map(\.deadline)
    }

    private static func reentrancyMessage(caller: String) -> String {
        "ManualScheduler.\(caller): called while the scheduler is already advancing, from inside a "
            + "work item or from another thread; advance it from one place only, outside its work"
    }
}
