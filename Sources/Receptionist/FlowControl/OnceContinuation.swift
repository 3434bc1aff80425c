/// A continuation resumed exactly once by whichever comes first: the writability block, or the
/// task's cancellation (``DeliveryHandle/untilWritable()``).
final class OnceContinuation: Sendable {
    private enum State {
        case waiting
        case set(CheckedContinuation<Writability, Never>)
        /// Resumed before the continuation was set: with this state (`nil`: cancelled).
        case resumedEarly(Writability?)
        case done
    }

    private let state = Locked<State>(.waiting)
    /// The state to answer on cancellation, read after the lock.
    private let current: @Sendable () -> Writability

    init(current: @escaping @Sendable () -> Writability = { .paused }) {
        self.current = current
    }

    /// Sets the continuation; resumes it at once if the answer came first.
    func set(_ continuation: CheckedContinuation<Writability, Never>) {
        let early: Writability?? = state.withLock { state in
            switch state {
            case .waiting:
                state = .set(continuation)
                return .none
            case .resumedEarly(let answer):
                state = .done
                return .some(answer)
            case .set, .done:
                preconditionFailure("Internal inconsistency: a continuation set twice")
            }
        }
        if let early { continuation.resume(returning: early ?? current()) }
    }

    /// Resumes with `answer` (`nil`: cancelled), unless already resumed.
    func resume(_ answer: Writability?) {
        let continuation: CheckedContinuation<Writability, Never>? = state.withLock { state in
            switch state {
            case .waiting:
                state = .resumedEarly(answer)
                return nil
            case .set(let continuation):
                state = .done
                return continuation
            case .resumedEarly, .done:
                return nil
            }
        }
        continuation?.resume(returning: answer ?? current())
    }
}
