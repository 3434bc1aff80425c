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
/// `OperationQueue.main`) time each task block, one clock read per change (and one per segment),
/// and call `report` for each one that ran longer than `budget`. Off (the default), those drains
/// time only as ``ReceptionistStatistics/Timing`` says. Other targets are never watched.
///
/// Threading: `report` runs on the main thread, right after the slow task block returned and
/// before the next one, with no lock of the library held; keep it short (log, count). Its own
/// time is not counted against the next task block. It runs where the task block ran: a `send`
/// from it behaves as one from the task block (a ``BufferPolicy/waiting(capacity:)`` buffer
/// refuses instead of waiting). A task block still running is not reported: the report would
/// have to run on the main thread it holds. While it runs,
/// ``ReceptionistStatistics/Timing/longestTaskBlock``, read from another thread, counts it for as
/// long as it has run. Turning the diagnostic on, off or to another budget, from any
/// thread, takes effect at the next segment a drain takes; a new report replaces the old one at
/// once, and the old one is released outside every lock.
public enum MainThreadBudget {
    /// The budget in nanoseconds, 0 when off: a copy of `setting`'s, written under its lock, for
    /// the drains to read without it.
    private static let budget = AtomicValue<Int>(0)
    /// The budget and the report, changed together.
    private static let setting = Locked<(budget: Int, report: @Sendable (SlowTaskBlock) -> Void)?>(nil)

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
        let nanoseconds = Swift.max(1, Int(budget.nanoseconds))
        // The report replaced is released after the lock: what it captured may run code there.
        setting.withLockThenRelease { setting in
            let replaced = setting
            setting = (nanoseconds, report)
            Self.budget.store(nanoseconds, ordering: .releasing)
            return ((), released: replaced)
        }
    }

    /// Stops reporting; the report is released (outside every lock).
    public static func stopReporting() {
        setting.withLockThenRelease { setting in
            let replaced = setting.take()
            budget.store(0, ordering: .releasing)
            return ((), released: replaced)
        }
    }

    /// The budget in nanoseconds, 0 when off: read by a drain on the main thread per segment.
    @usableFromInline
    static var nanoseconds: UInt64 { UInt64(budget.load(ordering: .acquiring)) }

    /// A task block of `element` changes took `took` nanoseconds, more than `budget`.
    @usableFromInline
    static func report<Element>(took: UInt64, budget: UInt64, element: Element.Type) {
        guard let report = setting.withLock({ $0?.report }) else { return }
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
