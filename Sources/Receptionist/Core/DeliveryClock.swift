import Dispatch

/// Where a delivery reads the time for ``ReceptionistStatistics/timing``: the system's monotonic
/// clock, or a clock a test moves by hand (``ManualDeliveryClock``).
///
/// Read once per buffer segment on each side (a sender starting a segment, a drain taking one),
/// never once per change: see ``ReceptionistStatistics/Timing``.
@usableFromInline
struct DeliveryClock: Sendable {
    /// A test's clock; `nil`: the system's.
    @usableFromInline
    let manual: ManualDeliveryClock?

    @usableFromInline
    init(manual: ManualDeliveryClock? = nil) {
        self.manual = manual
    }

    /// The system's monotonic clock (`DispatchTime`, which does not advance while the system
    /// sleeps on Apple platforms).
    @usableFromInline
    static var system: DeliveryClock { DeliveryClock() }

    /// The time in nanoseconds; never 0, which marks a segment that was not stamped.
    @inlinable
    func now() -> UInt64 {
        if let manual { return manual.now }
        return DispatchTime.now().uptimeNanoseconds
    }
}

/// Test hook: a delivery clock that moves only when the test advances it.
@usableFromInline
final class ManualDeliveryClock: Sendable {
    private let nanoseconds = AtomicValue<Int>(1)
    private let readCount = AtomicValue<Int>(0)

    init() {}

    @usableFromInline
    var now: UInt64 {
        _ = readCount.add(1, ordering: .relaxed)
        return UInt64(nanoseconds.load(ordering: .acquiring))
    }

    /// How many times the library read this clock: what a delivery costs in clock reads.
    var reads: Int { readCount.load(ordering: .relaxed) }

    /// Moves the clock forward by `duration`, which must not be negative.
    func advance(by duration: Duration) {
        precondition(duration >= .zero, "Internal inconsistency: a test moved its delivery clock back")
        nanoseconds.add(Int(duration.nanoseconds), ordering: .releasing)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, saturating at `Int64.max`.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, carried) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if carried { return seconds < 0 ? .min : .max }
        return sum
    }
}
