/// The decisions of a time-based stage (batch, throttle, debounce…), as a plain value: events in,
/// one ``TimedStageAction`` out.
///
/// A ``TimedStage`` keeps the machine in a lock, calls one method per event under it with the
/// scheduler's time, and performs the action after the lock is released: arm or cancel its one
/// timer, hand the outputs on, release what the machine let go of. Machines are tested without
/// threads or a scheduler: feed events, compare actions.
///
/// A new time-based stage is a machine, an operator that calls
/// ``Pipeline/adding(_:timed:scheduler:)``, and their tests.
@usableFromInline
protocol TimedStateMachine<Input, Output>: Sendable {
    associatedtype Input: Sendable
    associatedtype Output: Sendable

    /// `input` arrived at `now`. The machine owns it: it keeps it, hands it on in the action's
    /// outputs, or puts it in the action's `released`; it never destroys an input itself (its
    /// deinitialiser may be user code, and the machine runs under its stage's lock).
    mutating func received(_ input: consuming Input, at now: SchedulerInstant) -> TimedStageAction<Input, Output>
    /// The timer armed with `generation` fired at `now`. A timer replaced or cancelled since
    /// (an older generation) is ignored.
    mutating func timerFired(generation: Int, at now: SchedulerInstant) -> TimedStageAction<Input, Output>
    /// Hand on what the stage holds now; the stage keeps running.
    mutating func flush(at now: SchedulerInstant) -> TimedStageAction<Input, Output>
    /// The input ended: hand on what the stage holds.
    mutating func finish(at now: SchedulerInstant) -> TimedStageAction<Input, Output>
    /// How many elements the stage keeps now, to hand on later (flow control counts them).
    var heldCount: Int { get }
}

/// What a ``TimedStateMachine`` asks its stage to do after the lock is released.
@usableFromInline
struct TimedStageAction<Input, Output> {
    /// Outputs to hand on, in order.
    @usableFromInline var outputs: [Output]
    /// What to do with the stage's timer.
    @usableFromInline var timer: TimerAction
    /// An input the stage let go of without handing it on (a replaced value), to release after
    /// the lock: its deinitialiser may be user code.
    @usableFromInline var released: Input?

    @inlinable
    init(outputs: [Output] = [], timer: TimerAction = .none, released: Input? = nil) {
        self.outputs = outputs
        self.timer = timer
        self.released = released
    }
}

extension TimedStageAction: Sendable where Input: Sendable, Output: Sendable {}

/// What a time-based state machine asks of its timer.
@usableFromInline
enum TimerAction: Equatable, Sendable {
    /// Leave the timer as it is.
    case none
    /// Arm a timer for `deadline`, replacing (and cancelling) any armed one.
    case arm(at: SchedulerInstant, generation: Int)
    /// Cancel the armed timer.
    case disarm
}

extension Duration {
    /// The longest interval a time-based stage uses: `Int64.max` seconds (about 292 billion
    /// years). A longer interval is treated as this one, so that adding it to any instant a clock
    /// can reach never overflows; on the uptime clock it lies beyond what a `DispatchTime` can
    /// represent, so its timer is set for the distant future and never fires.
    @usableFromInline
    static let longestStageInterval = Duration.seconds(Int64.max)

    /// This interval, at most ``longestStageInterval``.
    @inlinable
    var clampedForStages: Duration { min(self, .longestStageInterval) }
}
