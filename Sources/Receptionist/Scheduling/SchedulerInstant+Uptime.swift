import Dispatch

/// The uptime clock shared by the `DispatchQueue` and `OperationQueue` schedulers.
extension SchedulerInstant {
    /// The current time of the uptime clock `DispatchTime.now()` reads (monotonic).
    static var uptimeNow: SchedulerInstant {
        SchedulerInstant(offset: .nanoseconds(Int64(clamping: DispatchTime.now().uptimeNanoseconds)))
    }

    /// This instant as a `DispatchTime`, rounded up to a whole nanosecond so that work never
    /// runs before the instant.
    ///
    /// Instants at or before the clock's origin become the earliest possible time (the work is
    /// due at once); instants too far away to represent become `DispatchTime.distantFuture`
    /// (the work never runs).
    var dispatchTime: DispatchTime {
        guard offset > .zero else { return DispatchTime(uptimeNanoseconds: 1) }
        // Compared first: `components` traps for offsets beyond Int64 seconds.
        guard offset < .nanoseconds(Int64.max) else { return .distantFuture }
        let (seconds, attoseconds) = offset.components
        let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64((attoseconds + 999_999_999) / 1_000_000_000)
        guard nanoseconds < UInt64(Int64.max) else { return .distantFuture }
        return DispatchTime(uptimeNanoseconds: max(1, nanoseconds))
    }
}
