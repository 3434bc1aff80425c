/// Keeps an observation alive; cancels it when released.
///
/// Returned by the `deliver(on:)` of an observed or tracked property's ``Pipeline``. Keep it for as
/// long as you want changes, for example in a property of the object that shows them, or in a
/// `Set<AnyDeliveryHandle>` with ``DeliveryHandle/store(in:)``.
///
/// ## Cancellation contract
/// ``cancel()`` is idempotent and may be called from any thread, including from inside the
/// observation's own task block; task blocks stop as <doc:ThreadingGuarantees#Cancel-and-finish> says.
/// Pending changes
/// are discarded (those waiting for the task block are counted in
/// ``ReceptionistStatistics/discarded``; what a stage held is in no counter); the task block and what it
/// captured are released (at once, or when a drain running on another thread returns).
/// Releasing the last reference to the token cancels it, unless ``finish()`` was called.
///
/// To stop without losing anything, call ``finish()`` instead: the observation stops taking
/// changes, its stages hand on what they hold, and everything is delivered before the task block
/// is released.
public final class ObservationToken: DeliveryHandle {
    private let handle: any ObservationHandle

    @usableFromInline
    init(_ handle: any ObservationHandle) {
        self.handle = handle
    }

    deinit {
        handle.ownerReleased()
    }

    /// Stops the observation at once and discards pending changes.
    public func cancel() {
        handle.cancel()
    }

    /// Stops the observation without losing anything: no change made after this call returns is
    /// taken; the stages hand on what they hold (a partial batch, a held throttle value, a
    /// pending debounce value); everything is delivered, in order; then the task block is
    /// released and ``isFinished`` becomes `true`.
    ///
    /// Idempotent; callable from any thread, including from inside the task block. Has no effect
    /// after ``cancel()``. The token may be released right after: releasing a finishing token
    /// does not cancel it.
    public func finish() {
        handle.finish()
    }

    /// Finishes as ``finish()`` does, and calls `completion` once every change taken was
    /// delivered and the task block released (or once the observation was cancelled instead):
    /// at once, on this thread, if it already ended; otherwise on the thread that ends it.
    public func finish(completion: @escaping @Sendable () -> Void) {
        handle.whenEnded(completion)
        handle.finish()
    }

    /// Makes every stage of the observation's pipeline hand on what it holds now (a partial
    /// batch, a held throttle value, a pending debounce value); the outputs are delivered after
    /// those already produced. The observation keeps running.
    ///
    /// Callable from any thread. Does nothing without stages, or after ``cancel()`` or
    /// ``finish()``.
    public func flush() {
        handle.flush()
    }

    /// Whether ``cancel()`` stopped the observation (a cancel after it finished has no effect).
    public var isCancelled: Bool { handle.isCancelled }

    /// Whether the observation ended after ``finish()``, or by itself when the observed storage
    /// was deallocated (for an `@Observed` property, with its model; for an ``ObservableValue``,
    /// when the box goes), and every pending change was delivered.
    public var isFinished: Bool { handle.isFinished }

    /// Counts of changes received, delivered, dropped and discarded.
    public var statistics: ReceptionistStatistics { handle.statistics }

    /// What the writers are told: a write to the observed property cannot be refused or paused,
    /// so this (with ``onWritabilityChange(on:_:)`` or ``whenWritable(on:_:)``) is how writers that
    /// must not outrun the consumer learn to pause; see ``Receptionist/writability``. Writers that
    /// stop writing at ``Writability/paused`` keep what the observation holds within the bound of
    /// <doc:ThreadingGuarantees#Flow-control>. Writes made meanwhile are still kept.
    public var writability: Writability { handle.writability }

    /// Runs `resume` once on `target` as soon as the writers may go on or the observation ended;
    /// see ``Receptionist/whenWritable(on:_:)-(_,(Writability)->Void)``.
    public func whenWritable(on target: some DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {
        handle.whenWritable(on: target, resume)
    }

    /// Calls `handler` on `target` with the current writability, then with every change; see
    /// ``Receptionist/onWritabilityChange(on:_:)``.
    @discardableResult
    public func onWritabilityChange(
        on target: some DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        handle.onWritabilityChange(on: target, handler)
    }

    /// Test hook: the statistics of the intake of the observation's stages (the changes waiting
    /// for them); `nil` without stages.
    package var intakeStatistics: ReceptionistStatistics? { handle.intakeStatistics }
}

/// The running side of an observation, as seen by its token.
@usableFromInline
protocol ObservationHandle: Sendable {
    func cancel()
    /// Runs `completion` once the observation's delivery ended.
    func whenEnded(_ completion: @escaping @Sendable () -> Void)
    /// Cancels unless the observation is finishing.
    func ownerReleased()
    func finish()
    func flush()
    var isCancelled: Bool { get }
    var isFinished: Bool { get }
    var statistics: ReceptionistStatistics { get }
    /// See ``ObservationToken/writability``.
    var writability: Writability { get }
    /// See ``ObservationToken/whenWritable(on:_:)``.
    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void)
    /// See ``ObservationToken/onWritabilityChange(on:_:)``.
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener
    /// The statistics of the stages' intake, if the observation has stages (a test hook).
    var intakeStatistics: ReceptionistStatistics? { get }
}

extension ObservationHandle {
    /// A source without flow control (a tracking) is writable until it ended.
    var writability: Writability {
        isCancelled ? .ended(.cancelled) : isFinished ? .ended(.finished) : .writable
    }

    func whenWritable(on target: any DeliveryTarget, _ resume: @escaping @Sendable (Writability) -> Void) {
        let now = writability
        target.submit { resume(now) }
    }

    /// Hears the current state only: a source without flow control never pauses.
    func onWritabilityChange(
        on target: any DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void
    ) -> WritabilityListener {
        let listener = WritabilityListener(on: target, handler)
        listener.signal(writability)?.wake()
        return listener
    }

    @usableFromInline
    var intakeStatistics: ReceptionistStatistics? { nil }
}
