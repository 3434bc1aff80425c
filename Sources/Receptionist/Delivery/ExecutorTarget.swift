/// Delivery to any `SerialExecutor`: an event loop's (swift-nio's `channel.eventLoop.executor`),
/// a custom actor executor, a run loop of your own that conforms. No dependency: the library
/// takes the executor as the standard library's `SerialExecutor`.
///
/// ```swift
/// let loop = ExecutorTarget(channel.eventLoop.executor)  // one target per event loop
/// let receptionist = Receptionist<Message>(on: loop, buffering: .watermarks(low: 64, high: 256)) { message in
///     handle(message)  // on the event loop
/// }
/// // The producer, on the event loop:
/// if receptionist.send(message).shouldPause {
///     source.pause()
///     receptionist.whenWritable(on: loop) { source.resume() }  // on the event loop, never inline
/// }
/// ```
///
/// `.executor(e)` makes one where a target is expected: `Receptionist(on: .executor(e)) { … }`,
/// `deliver(on: .executor(e))`, `whenWritable(on: .executor(e)) { … }`.
///
/// ## Threading contract
/// - **Where:** each work item submitted (a receptionist's drain, a `whenWritable` block) runs in
///   a job on `executor`: in a task isolated to an actor of the library whose executor is
///   `executor`. So task blocks run on the executor's context (an event loop's thread), one at a
///   time, and code there may enter an actor of yours whose executor is the same with
///   `assumeIsolated`.
/// - **Order:** work submitted through one target (this value and its copies) runs one item at a
///   time, in the order of the ``submit(_:)`` calls (their order on the target's lock: calls
///   from one thread keep that thread's order), each exactly once. Swift does not order separate
///   tasks that enter one executor, so the target keeps its own first-in, first-out list of work
///   and has at most one job on the executor at a time, which runs what waited when it started.
///   Targets made separately from one executor keep no order between them: make one target per
///   executor and use it everywhere order across uses matters (several `whenWritable` blocks and
///   the drains they follow, for instance). Task blocks of one receptionist are in order whatever
///   the target, as on every target.
/// - **Never inline:** work submitted while already on the executor (a `whenWritable` block
///   raised by a drain running there, a drain resubmitted after its budget) is enqueued, never
///   run inside ``submit(_:)``: it runs in a later job, after the job that submitted it returns,
///   and behind the jobs the executor was given meanwhile. So a producer on the executor is never
///   re-entered by its own resume block.
/// - **Cost:** one job (one task) per burst, not per change: the receptionist submits one drain
///   per burst, and work submitted while a job is scheduled or running joins it or the next one.
/// - **Cancel:** the target has nothing to cancel. A receptionist's cancel works as on every
///   target: task blocks stop, and drains already submitted still run once, returning at once; a
///   `whenWritable` block still waiting runs (on the executor) when the receptionist is
///   cancelled or finishes.
/// - **The executor's part:** it must run every job it is given, once. One that drops jobs (an
///   event loop shut down with work still submitted) leaves the receptionist's pending changes
///   undelivered, as any target that drops work would.
/// - **Priority:** each job is a detached task of priority `.medium`, as an actor's drain is:
///   without the sender's priority or task-local values. What a job's priority means is the
///   executor's business (swift-nio's event loops ignore it).
/// - **Waiting senders:** with ``BufferPolicy/waiting(capacity:)``, a `send` that finds the
///   buffer full is refused, not blocked, in any Swift task (as for an actor target), and on the
///   executor's own context where the executor can tell: where its `isIsolatingCurrentContext()`
///   answers `true` (Swift 6.2's runtime: macOS 26, iOS 26 and later on Apple platforms). Code on
///   the executor outside any task, with an executor that cannot tell, is not recognised; do not
///   `send` into a full waiting receptionist from there
///   (<doc:ThreadingGuarantees#Back-pressure>).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public struct ExecutorTarget: DeliveryTarget {
    /// The list of work and the one job at a time that runs it, shared by the copies.
    let jobs: ExecutorJobs

    /// A target whose work runs on `executor`.
    ///
    /// - Parameter executor: where work runs, such as `channel.eventLoop.executor`.
    public init(_ executor: any SerialExecutor) {
        jobs = ExecutorJobs(executor)
    }

    /// The executor this target runs its work on.
    public var executor: any SerialExecutor { jobs.isolation.executor }

    /// Runs `work` once, later, in a job on the executor, after the work submitted to this target
    /// before it; never inside this call.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        jobs.submit(work)
    }

    /// The priority of every job's task: that of an actor's drain, matching the QoS (`.default`)
    /// that ``qos(of:)`` gives the pipeline's own queues for this target.
    static var jobPriority: TaskPriority { .medium }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension DeliveryTarget where Self == ExecutorTarget {
    /// Delivery on `executor`, any `SerialExecutor`: `.executor(channel.eventLoop.executor)`.
    ///
    /// A new ``ExecutorTarget`` on each call: work submitted through one target runs in
    /// submission order; keep one where order across several uses matters.
    public static func executor(_ executor: any SerialExecutor) -> ExecutorTarget {
        ExecutorTarget(executor)
    }
}

/// The work of one ``ExecutorTarget``: its list, under a lock, and the jobs that run it, tasks on
/// an actor whose executor is the target's.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ExecutorJobs: Sendable {
    private let machine = Locked(ExecutorTargetStateMachine())
    let isolation: ExecutorIsolation

    init(_ executor: any SerialExecutor) {
        isolation = ExecutorIsolation(executor)
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        let action = machine.withLock { $0.submitted(work) }
        if action == .scheduleJob {
            // From any thread, outside any task of the executor's: the task starts on the
            // global executor and enters the actor, so its job is enqueued on `executor`.
            Task.detached(priority: ExecutorTarget.jobPriority) { [self] in await isolation.runJob(of: self) }
        }
    }

    /// One job, on the executor: runs what waited when it started, in order, outside the lock.
    ///
    /// - Returns: whether work was submitted meanwhile, so that the next job must be scheduled.
    func runJob() -> Bool {
        let taken = machine.withLock { $0.jobStarted() }
        for work in taken { work() }
        // Each work item (and what it captures) is released here, outside the lock, as `taken` ends.
        return machine.withLock { $0.jobEnded() } == .scheduleNextJob
    }

    /// Test hook: how many work items wait for a job.
    var waitingCount: Int { machine.withLock { $0.waitingCount } }
}

/// The actor whose executor is the target's: a task isolated to it runs on that executor.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
actor ExecutorIsolation {
    /// Kept here, so that the executor lives as long as the actor whose unowned reference to it
    /// the runtime uses.
    nonisolated let executor: any SerialExecutor

    init(_ executor: any SerialExecutor) {
        self.executor = executor
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// Runs one job of `jobs` and, if work was submitted meanwhile, schedules the next.
    func runJob(of jobs: ExecutorJobs) {
        guard jobs.runJob() else { return }
        // A task created isolated to this actor is enqueued on its executor directly, behind the
        // jobs the executor was given while this one ran.
        Task { self.runJob(of: jobs) }
    }
}
