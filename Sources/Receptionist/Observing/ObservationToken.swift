/// Keeps an observation alive; cancels it when released.
///
/// Returned by ``PropertyObservation/deliver(on:buffering:_:)``. Keep it for as long as you
/// want changes, for example in a property of the object that shows them, or in a
/// `Set<ObservationToken>` with ``store(in:)``.
///
/// ## Cancellation contract
/// ``cancel()`` is idempotent and may be called from any thread, including from inside the
/// observation's own task block. Once it returns, no task block of the observation starts,
/// except one a drain on another thread had already started (it may finish). Pending changes
/// are discarded and counted in ``ReceptionistStatistics/discarded``; the task block and what it
/// captured are released (at once, or when a drain running on another thread returns).
/// Releasing the last reference to the token cancels it.
public final class ObservationToken: Sendable, Hashable {
    private let handle: any ObservationHandle

    @usableFromInline
    init(_ handle: any ObservationHandle) {
        self.handle = handle
    }

    deinit {
        handle.cancel()
    }

    /// Stops the observation at once and discards pending changes.
    public func cancel() {
        handle.cancel()
    }

    /// Whether ``cancel()`` stopped the observation (a cancel after it finished has no effect).
    public var isCancelled: Bool { handle.isCancelled }

    /// Whether the observation ended by itself: the observed storage was deallocated (for an
    /// `@Observed` property, with its model; for an ``ObservableValue``, when the box goes) and
    /// every pending change was delivered.
    public var isFinished: Bool { handle.isFinished }

    /// Counts of changes received, delivered, dropped and discarded.
    public var statistics: ReceptionistStatistics { handle.statistics }

    /// Keeps the token in `set`, like Combine's `AnyCancellable.store(in:)`.
    public func store(in set: inout Set<ObservationToken>) {
        set.insert(self)
    }

    public static func == (lhs: ObservationToken, rhs: ObservationToken) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}

/// The running side of an observation, as seen by its token.
@usableFromInline
protocol ObservationHandle: Sendable {
    func cancel()
    var isCancelled: Bool { get }
    var isFinished: Bool { get }
    var statistics: ReceptionistStatistics { get }
}
