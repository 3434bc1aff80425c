/// The decisions of an ``ExecutorTarget``, as a plain value: the work submitted to the target
/// waits in one FIFO, and at most one job on the executor runs it.
///
/// Invariants:
/// - `.idle`: no job is scheduled or running, and nothing waits.
/// - `.jobScheduled`: one job is on its way to the executor (a task not yet started there); it
///   will take everything that waits when it starts.
/// - `.jobRunning`: one job runs the work it took when it started; work submitted meanwhile
///   waits for the next job, which the running one schedules when it ends.
///
/// So each work item is taken by exactly one job, once, and jobs never overlap: work runs in the
/// order of the ``submitted(_:)`` calls (their order on the target's lock). A job runs only what
/// waited when it started, so work that a job submits (a drain that resubmits itself after its
/// budget, a resume block raised on the executor) goes behind whatever else the executor was
/// given meanwhile, instead of keeping the executor to itself.
struct ExecutorTargetStateMachine: Sendable {
    typealias Work = @Sendable () -> Void

    private enum State: Sendable {
        case idle
        case jobScheduled
        case jobRunning
    }

    /// What a submission asks of the caller, after the lock.
    enum SubmitAction: Equatable, Sendable {
        /// Schedule a job on the executor (the target was idle).
        case scheduleJob
        /// Nothing: a job scheduled or running will take the work.
        case none
    }

    /// What the end of a job asks of the job, after the lock.
    enum JobEndAction: Equatable, Sendable {
        /// Work was submitted while the job ran: schedule the next job.
        case scheduleNextJob
        /// Nothing waits: the target is idle.
        case none
    }

    private var state = State.idle
    private var waiting: [Work] = []

    /// `work` was submitted: it waits for a job.
    mutating func submitted(_ work: @escaping Work) -> SubmitAction {
        waiting.append(work)
        switch state {
        case .idle:
            state = .jobScheduled
            return .scheduleJob
        case .jobScheduled, .jobRunning:
            return .none
        }
    }

    /// A job started on the executor: it takes everything that waits, in submission order.
    mutating func jobStarted() -> [Work] {
        guard case .jobScheduled = state else { preconditionFailure("Internal inconsistency: \(state)") }
        state = .jobRunning
        var taken: [Work] = []
        swap(&taken, &waiting)
        return taken
    }

    /// The running job ran all it took.
    mutating func jobEnded() -> JobEndAction {
        guard case .jobRunning = state else { preconditionFailure("Internal inconsistency: \(state)") }
        if waiting.isEmpty {
            state = .idle
            return .none
        }
        state = .jobScheduled
        return .scheduleNextJob
    }

    /// How many work items wait for a job (a test hook).
    var waitingCount: Int { waiting.count }
}
