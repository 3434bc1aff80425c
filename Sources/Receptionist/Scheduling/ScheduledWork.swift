/// A handle to work submitted with ``DeliveryScheduler/submit(at:_:)``: cancels it if it has not
/// started.
///
/// Threading: ``cancel()`` and ``isCancelled`` may be called from any thread, any number of
/// times, also from inside the work itself. Starting and cancelling are decided under one lock,
/// so once ``cancel()`` returns the work will not start, unless it had already started; a
/// running work item is neither interrupted nor waited for. Cancelling releases the work closure
/// (and what it captured) at once, on the cancelling thread. Discarding the handle does not
/// cancel the work.
public final class ScheduledWork: Sendable {
    private enum State {
        case pending(@Sendable () -> Void)
        case started(cancelRequested: Bool)
        case cancelled
    }

    private let state: Locked<State>

    /// A handle for `work`, which has not started.
    init(_ work: @escaping @Sendable () -> Void) {
        state = Locked(.pending(work))
    }

    /// Cancels the work if it has not started; does nothing if it has started or was cancelled.
    ///
    /// Returns without waiting for running work. Callable from any thread.
    public func cancel() {
        // The closure's captures are user objects: they are let go after the lock is released.
        state.withLockThenRelease { state -> ((), released: (@Sendable () -> Void)?) in
            switch state {
            case .pending(let work):
                state = .cancelled
                return ((), released: work)
            case .started:
                state = .started(cancelRequested: true)
                return ((), released: nil)
            case .cancelled:
                return ((), released: nil)
            }
        }
    }

    /// Whether ``cancel()`` has been called, whether or not the work had already started.
    public var isCancelled: Bool {
        state.withLock { state in
            switch state {
            case .pending: false
            case .started(let cancelRequested): cancelRequested
            case .cancelled: true
            }
        }
    }

    /// Marks the work as started and returns it; `nil` if it was cancelled or already started.
    ///
    /// Schedulers call this on the work's context, at the deadline, and run what it returns.
    func claim() -> (@Sendable () -> Void)? {
        state.withLock { state in
            guard case .pending(let work) = state else { return nil }
            state = .started(cancelRequested: false)
            return work
        }
    }

    /// Runs the work, on the calling thread, unless it was cancelled or already started.
    ///
    /// A scheduler calls it once the deadline is reached, on its own context.
    func run() {
        guard let work = claim() else { return }
        assertNoLockHeld("running scheduled work")
        work()
    }
}
