/// An opt-in diagnostic for task blocks that hold the main thread longer than a budget, such as
/// a frame of the user interface.
///
/// ```swift
/// MainThreadBudget.reportTaskBlocks(longerThan: .milliseconds(16)) { slow in
///     print("Receptionist: \(slow)")
/// }
/// ```
///
/// While it is on, the drains of every delivery on the main queue or the main actor (and on
/// `OperationQueue.main`) time each task block, two clock reads per change, and call `report`
/// for each one that ran longer than `budget`. Off (the default), those drains time only as
/// ``ReceptionistStatistics/Timing`` says, once per segment. Other targets are never watched.
///
/// Threading: `report` runs on the main thread, right after the slow task block returned and
/// before the next one, with no lock of the library held; keep it short (log, count). Turning the
/// diagnostic on or off, from any thread, takes effect at the next segment a drain takes.
public enum MainThreadBudget {
    /// The budget in nanoseconds; 0: off.
    private static let budget = AtomicValue<Int>(0)
    private static let reporter = Locked<(@Sendable (SlowTaskBlock) -> Void)?>(nil)

    /// Reports every task block on the main thread that runs longer than `budget`, from now on,
    /// replacing an earlier report.
    ///
    /// - Parameters:
    ///   - budget: greater than zero; otherwise the program stops with a message naming it.
    ///   - report: runs on the main thread after each task block that overran the budget.
    public static func reportTaskBlocks(
        longerThan budget: Duration,
        _ report: @escaping @Sendable (SlowTaskBlock) -> Void
    ) {
        validate(
            budget > .zero,
            "MainThreadBudget.reportTaskBlocks(longerThan:): budget must be greater than zero, got \(budget)")
        reporter.withLock { $0 = report }
        Self.budget.store(Swift.max(1, Int(budget.nanoseconds)), ordering: .releasing)
    }

    /// Stops reporting; the report is released.
    public static func stopReporting() {
        budget.store(0, ordering: .releasing)
        let released = reporter.withLock { $0.take() }
        _ = released  // released after the lock
    }

    /// The budget in nanoseconds, 0 when off: read by a drain on the main thread per segment.
    @usableFromInline
    static var nanoseconds: UInt64 { UInt64(budget.load(ordering: .acquiring)) }

    /// A task block of `element` changes took `took` nanoseconds, more than `budget`.
    @usableFromInline
    static func report<Element>(took: UInt64, budget: UInt64, element: Element.Type) {
        guard let report = reporter.withLock({ $0 }) else { return }
        report(
            SlowTaskBlock(
                duration: .nanoseconds(Int64(truncatingIfNeeded: took)),
                budget: .nanoseconds(Int64(truncatingIfNeeded: budget)),
                changeType: String(describing: element)))
    }
}

/// A task block on the main thread that ran longer than the ``MainThreadBudget``.
public struct SlowTaskBlock: Sendable, Hashable, CustomStringConvertible {
    /// How long it ran.
    public let duration: Duration
    /// The budget it overran.
    public let budget: Duration
    /// The type of the change it was given (a pipeline's output type: `Array<Reading>` for a
    /// batch), to tell receptionists apart.
    public let changeType: String

    public var description: String {
        "a task block of \(changeType) held the main thread for \(duration), over its budget of \(budget)"
    }
}
