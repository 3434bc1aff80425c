/// A producer's handler of writability changes, registered with
/// ``Receptionist/onWritabilityChange(on:_:)``: keep it to stop it with ``cancel()``.
///
/// The handler hears the current state first, then every change, in order, never the same state
/// twice in a row, each on the target it was registered with and after every lock of the library
/// is released. It is released after the receptionist's ``Writability/ended(_:)`` state ran (or at
/// ``cancel()``). Releasing this object does not stop the handler.
public final class WritabilityListener: Sendable {
    /// The changes wait here, in order, for their turn on the listener's target: a receptionist of
    /// its own, so that two changes signalled by two threads one after the other run in that order.
    let core: ReceptionistCore<Writability>

    init(on target: some DeliveryTarget, _ handler: @escaping @Sendable (Writability) -> Void) {
        core = ReceptionistCore(Delivery(on: target, buffering: .unbounded, handler))
    }

    /// Stops the handler: a change not yet handed to it is discarded; a handler already running
    /// finishes. Idempotent; callable from any thread, also from the handler.
    public func cancel() {
        core.cancel()
    }

    /// Queues `state` for the handler, under the lock of the state machine that changed (its
    /// order is the order of the changes); an ended state is the last. Runs no user code.
    ///
    /// - Returns: what submits the handler's drain, to run after that lock is released; `nil` if
    ///   one is already scheduled (or the listener was cancelled).
    func signal(_ state: Writability) -> Waiter? {
        let needsDrain = core.state.withLock { machine in
            if state.isEnded { return machine.finish(appending: state).needsDrain }
            return machine.enqueue(state).action == .submitDrain
        }
        guard needsDrain else { return nil }
        let core = core
        return .callback { core.submitDrain() }
    }
}
