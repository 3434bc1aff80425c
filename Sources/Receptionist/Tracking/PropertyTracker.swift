import Observation

// The running side of a tracking (see ``TrackedProperty``): a delivery receptionist whose
// element is a request to read, and `withObservationTracking` registrations ("arms") that send
// those requests.
//
// The cycle, one arm at a time:
// 1. A read runs on the target: it arms the next tracking while reading, then runs the task
//    block with the value.
// 2. The model's registrar calls the arm's onChange at the next willSet, on the writing thread;
//    the arm sends one read request to the delivery receptionist, which bounces it to the target.
// 3. That read arms the next tracking, and so on.
//
// Reads are only requested by the current arm (once) or by `.initial`, so at most one read waits
// for the target while another runs: the tracking coalesces by construction.

/// A request, to the delivery receptionist of a tracking, to read the property on its target
/// and run the task block with the value.
struct TrackingRead: Sendable {}

/// The way from an arm back to the delivery receptionist.
///
/// Weak: an arm that the model's registrar still holds after the tracking was cancelled keeps
/// nothing alive. Set once, right after the receptionist is created (its handler needs the link
/// first).
final class TrackingLink: Sendable {
    private struct Connection {
        weak var core: ReceptionistCore<TrackingRead>?
    }

    private let connection = Locked(Connection())

    func connect(_ core: ReceptionistCore<TrackingRead>) {
        connection.withLock { $0.core = core }
    }

    /// Asks for a read on the target.
    func requestRead() {
        let core = connection.withLock { $0.core }
        core?.send(TrackingRead())  // outside the lock: submits to the target
    }

    /// Ends the tracking once what is pending was delivered.
    func finish() {
        let core = connection.withLock { $0.core }
        core?.finish()
    }
}

/// One `withObservationTracking` registration: requests at most one read.
///
/// The registrar holds the arm (through its onChange closure) until the tracked property is
/// about to change, then calls onChange and lets it go. It also lets it go, without calling it,
/// when the model is deallocated (the registrar goes with the model): the arm then requests a
/// read anyway, which finds the model gone and finishes the tracking.
final class TrackingArm: Sendable {
    private enum Phase: UInt8, AtomicWord {
        /// Created; the read has not accessed a tracked property (yet).
        case created
        /// The registrar holds the onChange closure.
        case installed
        /// A read was requested.
        case fired
    }

    private let link: TrackingLink
    private let phase = AtomicValue<Phase>(.created)

    init(_ link: TrackingLink) {
        self.link = link
    }

    /// The onChange closure to register. `withObservationTracking` evaluates it (an autoclosure)
    /// only when the read accessed at least one tracked property, so this also tells whether the
    /// arm was installed.
    func onChange() -> @Sendable () -> Void {
        phase.store(.installed, ordering: .releasing)
        return { [self] in fire() }
    }

    /// Whether the registrar holds this arm: `false` when the read accessed no tracked property
    /// (a `let`, an `@ObservationIgnored` property), so that no change will ever be reported.
    var isInstalled: Bool {
        phase.load(ordering: .acquiring) != .created
    }

    private func fire() {
        // Writes on two threads can each call the same onChange: the registrar collects the
        // closures under its lock and calls them after releasing it. One read is enough.
        if phase.compareExchange(expected: .installed, desired: .fired, ordering: .acquiringAndReleasing).exchanged {
            link.requestRead()
        }
    }

    deinit {
        // Let go without firing: the model is being deallocated. This may run under the
        // registrar's lock, so it only requests a read (no user code, nothing released here).
        if phase.load(ordering: .acquiring) == .installed {
            link.requestRead()
        }
    }
}

/// Reads `keyPath` of `model` inside `withObservationTracking`, registering a new arm.
///
/// - Returns: the value read, and whether the arm was installed.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
func trackedRead<Model: AnyObject, Value>(
    _ keyPath: KeyPath<Model, Value>,
    of model: Model,
    link: TrackingLink
) -> (value: Value, isArmed: Bool) {
    let arm = TrackingArm(link)
    let value = withObservationTracking({ model[keyPath: keyPath] }, onChange: arm.onChange())
    return (value, arm.isInstalled)
}

/// Reads a `Sendable` model's property for a ``TrackedProperty``; its model may be written on
/// any thread.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
final class TrackingReader<Model: Observable & AnyObject & Sendable, Value: Sendable>: Sendable {
    private weak let model: Model?
    private let keyPath: KeyPath<Model, Value> & Sendable
    let link: TrackingLink

    init(model: Model, keyPath: KeyPath<Model, Value> & Sendable, link: TrackingLink) {
        self.model = model
        self.keyPath = keyPath
        self.link = link
    }

    /// Arms the next tracking, then reads the value.
    ///
    /// The value returned is read *after* the tracking is installed, not the one read while
    /// arming: a write whose willSet came before the installation did not call the new arm, but
    /// (when the model announces and stores its writes under the lock its getter takes) it is
    /// complete before this second read, which therefore sees it. See ``TrackedProperty``.
    ///
    /// - Returns: `nil` if the model is gone; otherwise the value and whether a tracking was
    ///   armed.
    func read() -> (value: Value, isArmed: Bool)? {
        guard let model else { return nil }
        let isArmed = trackedRead(keyPath, of: model, link: link).isArmed
        return (model[keyPath: keyPath], isArmed)
    }

    /// Arms the first tracking without delivering (no `.initial`).
    ///
    /// - Returns: whether a tracking was armed.
    func arm() -> Bool {
        guard let model else { return false }
        return trackedRead(keyPath, of: model, link: link).isArmed
    }

    /// The delivery receptionist's handler: reads, then runs `task` with the value; finishes
    /// when the model is gone or nothing can be tracked.
    func handler(_ task: @escaping @Sendable (Value) -> Void) -> @Sendable (TrackingRead) -> Void {
        { [self] _ in
            guard let (value, isArmed) = read() else {
                link.finish()
                return
            }
            task(value)
            if !isArmed { link.finish() }
        }
    }
}

/// Reads a main-actor model's property for a ``MainActorTrackedProperty``: everything happens on
/// the main actor, so the model need not be `Sendable` and one read suffices.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
final class MainActorTrackingReader<Model: Observable & AnyObject, Value: Sendable> {
    private weak var model: Model?
    private let keyPath: KeyPath<Model, Value>
    private let task: @MainActor (Value) -> Void
    let link: TrackingLink

    init(model: Model, keyPath: KeyPath<Model, Value>, link: TrackingLink, task: @escaping @MainActor (Value) -> Void) {
        self.model = model
        self.keyPath = keyPath
        self.link = link
        self.task = task
    }

    /// Reads (arming the next tracking), then runs the task block; finishes when the model is
    /// gone or nothing can be tracked.
    func readAndDeliver() {
        guard let (value, isArmed) = read() else {
            link.finish()
            return
        }
        task(value)
        if !isArmed { link.finish() }
    }

    private func read() -> (value: Value, isArmed: Bool)? {
        guard let model else { return nil }
        return trackedRead(keyPath, of: model, link: link)
    }

    /// Arms the first tracking without delivering (no `.initial`).
    func arm() -> Bool {
        read()?.isArmed ?? false
    }
}

/// A tracking as its ``ObservationToken`` sees it: the receptionist that reads, and the stages
/// the values go through, if any.
final class TrackingHandle: ObservationHandle {
    let core: ReceptionistCore<TrackingRead>
    private let stages: (any StagesControl)?

    init(_ core: ReceptionistCore<TrackingRead>, stages: (any StagesControl)? = nil) {
        self.core = core
        self.stages = stages
    }

    func cancel() {
        stages?.cancel()
        core.cancel()
    }

    func ownerReleased() {
        if core.lifecycle == .active { cancel() }
    }

    /// The stages finish once the reads are done (see ``StagesFeed``).
    func finish() { core.finish() }
    func whenEnded(_ completion: @escaping @Sendable () -> Void) {
        if let stages { stages.whenEnded(completion) } else { core.whenEnded(completion) }
    }
    func flush() { stages?.flush() }
    var isCancelled: Bool { stages?.isCancelled ?? core.isCancelled }
    var isFinished: Bool { stages?.isFinished ?? core.isFinished }
    var statistics: ReceptionistStatistics { stages?.statistics ?? core.statistics }
}
