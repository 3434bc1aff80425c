/// A point in time on a ``DeliveryScheduler``'s clock, as the time since the clock's origin.
///
/// A plain value: safe to use from any thread. For `DispatchQueue` and `OperationQueue` the
/// origin is the origin of the uptime clock; for a new ``ManualScheduler`` it is its starting
/// time, ``zero``.
public struct SchedulerInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// The time since the scheduler's origin.
    public let offset: Duration

    /// An instant `offset` after the scheduler's origin.
    public init(offset: Duration) {
        self.offset = offset
    }

    /// The scheduler's origin: the starting time of a new ``ManualScheduler``.
    public static let zero = SchedulerInstant(offset: .zero)

    /// The instant `duration` after `instant`.
    public static func + (instant: SchedulerInstant, duration: Duration) -> SchedulerInstant {
        SchedulerInstant(offset: instant.offset + duration)
    }

    /// The instant `duration` before `instant`.
    public static func - (instant: SchedulerInstant, duration: Duration) -> SchedulerInstant {
        SchedulerInstant(offset: instant.offset - duration)
    }

    /// Orders instants by their offset.
    public static func < (lhs: SchedulerInstant, rhs: SchedulerInstant) -> Bool {
        lhs.offset < rhs.offset
    }

    /// The offset from the origin, as `t+1.5 seconds`.
    public var description: String {
        offset < .zero ? "t\(offset)" : "t+\(offset)"
    }
}
