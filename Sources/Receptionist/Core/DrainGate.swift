/// Back-pressure behind a pipeline's stages without a waiting thread: the gate between a
/// ``BufferPolicy/waiting(capacity:)`` pipeline's intake (in front of the stages) and its
/// delivery (behind them).
///
/// The stages never wait for room. Instead, the intake's drain takes input only while the outputs
/// waiting for their task block stand for fewer than `capacity` inputs (``room``), and *parks*
/// when they stand for `capacity` or more: it returns, leaving the intake marked busy, so that
/// senders fill the intake and wait there (on their own threads or tasks). The delivery, as it
/// hands outputs to their task block, takes their weight off; once the outputs waiting stand for
/// half the capacity or less (``lowWater``), it resumes the parked drain on the stage queue. So no
/// thread of the library ever waits for the consumer, and nothing the intake accepted is lost.
///
/// An output stands for the inputs the stages took since the previous output (``weigh()``): one
/// for `map`, a batch's elements for `batch`, what a throttle folded for `throttle`.
///
/// ## Parking without a lost wake-up
/// Two threads meet here, each with one atomic word to write and the other's to read, all
/// sequentially consistent:
/// - the intake's drain, out of room: stores `parked = true`, then reads ``outstanding``; if that
///   is back at the low-water mark already, it takes the flag back (compare-exchange) and goes on;
///   if the exchange fails, the delivery took it first and has resumed a drain, so this one stops;
/// - the delivery, handing an output over: subtracts its weight from ``outstanding``, then reads
///   `parked`; at or below the low-water mark with the flag set, it takes the flag
///   (compare-exchange) and resumes the drain.
///
/// Whichever order the four operations run in, one side sees the other's write, and the flag is
/// taken by exactly one of them: a parked drain is always resumed, and never twice.
///
/// A cancel meets the drain the same way: it stores ``cancelled``, then tries to take the flag;
/// the drain, having stored the flag, reads ``cancelled`` and, if set, tries to take the flag back
/// and stops. So a cancel that comes after the drain's last segment but before its park (when it
/// finds nothing parked) still keeps the drain from parking for ever, holding the intake.
@usableFromInline
final class DrainGate: Sendable {
    /// The weight behind the stages at which the intake's drain parks.
    @usableFromInline let capacity: Int
    /// The weight at or below which a parked drain is resumed.
    @usableFromInline let lowWater: Int
    /// The weight of the outputs not yet handed to their task block.
    @usableFromInline let outstanding = AtomicValue<Int>(0)
    /// Inputs the stages took since the last output. Written by the intake's drain only (drains
    /// of one intake never overlap), so plain loads and stores suffice.
    @usableFromInline let taken = AtomicValue<Int>(0)
    /// Whether the intake's drain is parked, waiting for ``resumeIfParked()``.
    @usableFromInline let parked = AtomicValue<Bool>(false)
    /// Whether the intake's producers are paused (a ``BufferPolicy/watermarks(low:high:)``
    /// pipeline), mirrored under the intake's lock: while set, every hand-over asks the intake
    /// (``onHandedOver``) whether they may go on, since what waits behind the stages counts too.
    @usableFromInline let producersPaused = AtomicValue<Bool>(false)
    /// What the delivery calls after a hand-over while ``producersPaused``: the intake's check of
    /// its producers' writability. Set once, when the pipeline is built.
    /// Boxed in a class: a closure read through the generic lock is reabstracted, and written
    /// back, on every access, which nested a thunk per hand-over (a stack overflow on release).
    @usableFromInline let onHandedOver = Locked<ProducerCheck?>(nil)
    /// The elements time-based stages keep (an open batch, a held throttle or debounce value),
    /// which they will hand on by themselves, at their timer: counted against the capacity, so
    /// that a stage cannot take more than the bound while its consumer is slow. Written by the
    /// stages, which run on the intake's drain only.
    @usableFromInline let stagesHeld = AtomicValue<Int>(0)
    /// Timer fires waiting to run on the intake's drain ahead of the elements waiting in front of
    /// the stages: they free room (what a time-based stage keeps), so they must never wait for it.
    /// Counted in
    /// ``urgentCount`` (read without the lock by the drain and by ``park(resuming:)``).
    private let urgent = Locked<[@Sendable () -> Void]>([])
    @usableFromInline let urgentCount = AtomicValue<Int>(0)
    /// Whether the intake is finishing: its producers stopped, so what the time-based stages keep
    /// no longer holds back what waits in front of them (memory no longer grows), and the finish
    /// behind it is reached without waiting for their timers.
    @usableFromInline let finishing = AtomicValue<Bool>(false)
    /// Whether the pipeline's elements are weighed (``Delivery/weighing``): the capacity and the
    /// level are weights, and no time-based stage may keep elements (its kept count is not a
    /// weight), which ``TimedStage`` checks as the pipeline is built.
    @usableFromInline let weighs: Bool
    /// Whether the pipeline was cancelled: a drain that finds it set does not park.
    let cancelled = AtomicValue<Bool>(false)
    /// What resumes the parked drain (submits it to the stage queue). It holds the intake, as a
    /// submitted drain would: a pipeline finished and released while its drain is parked still
    /// delivers everything. Set by ``park(resuming:)`` before the flag, taken by whoever takes
    /// the flag, and by ``cancel()``.
    private let parkedDrain = Locked<(@Sendable () -> Void)?>(nil)

    /// - Parameters:
    ///   - capacity: the weight behind the stages at which the drain parks.
    ///   - lowWater: the weight at or below which it is resumed; half the capacity by default.
    ///   - weighs: whether the inputs are weighed (``inputTaken(weighing:)``), not counted.
    @usableFromInline
    init(capacity: Int, lowWater: Int? = nil, weighs: Bool = false) {
        self.capacity = capacity
        self.lowWater = lowWater ?? capacity / 2
        self.weighs = weighs
    }

    /// What the pipeline holds past its intake: the weight of the outputs not yet handed to their
    /// task block, and what the time-based stages keep.
    @inlinable
    var heldPastIntake: Int { outstanding.load(ordering: .relaxed) &+ stagesHeld.load(ordering: .relaxed) }

    /// How many inputs the intake's drain may take now: the capacity less what waits for the task
    /// block and, until the pipeline finishes, what the time-based stages keep.
    @inlinable
    var room: Int {
        let kept = finishing.load(ordering: .relaxed) ? 0 : stagesHeld.load(ordering: .relaxed)
        return capacity - outstanding.load(ordering: .acquiring) - kept
    }

    /// A time-based stage now keeps `delta` more (or, negative, fewer) elements.
    @inlinable
    func stagesHold(_ delta: Int) {
        stagesHeld.store(stagesHeld.load(ordering: .relaxed) &+ delta, ordering: .relaxed)
    }

    /// Queues `work` (a timer fire) to run on the intake's drain before any more elements
    /// enter the stages, and resumes the drain if it is parked. The caller also sends the intake an
    /// event that runs ``runUrgent()``, in case no drain is scheduled.
    @usableFromInline
    func addUrgent(_ work: @escaping @Sendable () -> Void) {
        urgent.withLock { $0.append(work) }
        urgentCount.add(1, ordering: .sequentiallyConsistent)
        resumeIfParked()
    }

    /// Runs the urgent work queued so far, in order. On the intake's drain only.
    @inlinable
    func runUrgent() {
        guard urgentCount.load(ordering: .relaxed) != 0 else { return }
        runQueuedUrgent()
    }

    @usableFromInline
    func runQueuedUrgent() {
        let work = urgent.withLock { queued in
            defer { queued = [] }
            return queued
        }
        urgentCount.subtract(work.count, ordering: .relaxed)
        for item in work { item() }
    }

    /// The producers stopped (the pipeline finishes): what the time-based stages keep no longer
    /// holds the drain back, and a parked drain is resumed.
    func finish() {
        finishing.store(true, ordering: .sequentiallyConsistent)
        resumeIfParked()
    }

    /// The intake's drain, about to run the stages on an input that weighs `weight` (1 unless
    /// the pipeline ``weighs`` its inputs).
    @inlinable
    func inputTaken(weighing weight: Int = 1) {
        taken.store(taken.load(ordering: .relaxed) &+ weight, ordering: .relaxed)
    }

    /// The last stage, about to hand on an output: its weight (the inputs taken since the last
    /// output), counted as outstanding until ``handedOver(_:)``.
    @inlinable
    func weigh() -> Int {
        let weight = taken.load(ordering: .relaxed)
        taken.store(0, ordering: .relaxed)
        if weight != 0 { outstanding.add(weight, ordering: .sequentiallyConsistent) }
        return weight
    }

    /// The delivery hands an output of `weight` to its task block.
    @inlinable
    func handedOver(_ weight: Int) {
        guard weight != 0 else { return }
        let now = outstanding.subtract(weight, ordering: .sequentiallyConsistent).newValue
        if now &+ stagesHeld.load(ordering: .relaxed) <= lowWater, parked.load(ordering: .sequentiallyConsistent) {
            resumeIfParked()
        }
        if producersPaused.load(ordering: .relaxed) { checkProducers() }
    }

    @usableFromInline
    func checkProducers() {
        let check = onHandedOver.withLock { $0 }
        check?.run()
    }

    @usableFromInline
    func resumeIfParked() {
        guard parked.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged
        else { return }
        // Set before the flag, so present; run (and released) after the lock.
        let resume = parkedDrain.withLock { $0.take() }
        resume?()
    }

    /// The intake's drain found no room: parks, unless room came back meanwhile.
    ///
    /// - Parameter resume: what resumes the drain; it keeps the intake alive while parked.
    /// - Returns: `true` if the drain must stop now (it is parked, or another drain was resumed
    ///   in its place); `false` if it unparked itself and goes on.
    @usableFromInline
    func park(resuming resume: @escaping @Sendable () -> Void) -> Bool {
        parkedDrain.withLock { $0 = resume }
        parked.store(true, ordering: .sequentiallyConsistent)
        if cancelled.load(ordering: .sequentiallyConsistent) {
            // Cancelled before it parked: whichever of this and `cancel()` takes the flag lets
            // go of `resume` (which holds the intake), and the drain stops either way.
            takeBackAndRelease()
            return true
        }
        // Room came back, urgent work arrived, or the pipeline finishes: go on instead.
        let goesOn =
            outstanding.load(ordering: .sequentiallyConsistent) &+ stagesHeld.load(ordering: .relaxed) <= lowWater
            || urgentCount.load(ordering: .sequentiallyConsistent) != 0
            || finishing.load(ordering: .sequentiallyConsistent)
        guard goesOn else { return true }
        guard parked.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged
        else { return true }
        // Unparked itself: nobody will resume it. Released after the lock.
        let unused = parkedDrain.withLock { $0.take() }
        _ = unused
        return false
    }

    /// The pipeline was cancelled: a parked drain is never resumed, a drain about to park does not
    /// (it reads ``cancelled``), and what would resume it (which holds the intake) is let go.
    @usableFromInline
    func cancel() {
        cancelled.store(true, ordering: .sequentiallyConsistent)
        takeBackAndRelease()
        // Urgent work that will not run holds stage nodes: let go of it, after the lock.
        let dropped = urgent.withLock { queued in
            defer { queued = [] }
            return queued
        }
        _ = dropped
    }

    /// Takes the flag, if set, and lets go of what would have resumed the drain (after the lock).
    private func takeBackAndRelease() {
        guard parked.compareExchange(expected: true, desired: false, ordering: .sequentiallyConsistent).exchanged
        else { return }
        let unused = parkedDrain.withLock { $0.take() }
        _ = unused
    }
}

/// The intake's check of its producers' writability, held by a ``DrainGate``.
@usableFromInline
final class ProducerCheck: Sendable {
    let run: @Sendable () -> Void

    @usableFromInline
    init(_ run: @escaping @Sendable () -> Void) {
        self.run = run
    }
}
