/// A continuation resumed exactly once by whichever comes first: the writability block, or the
/// task's cancellation. ``wait(registering:orOnCancel:)`` is the one way to use it
/// (``DeliveryHandle/untilWritable()``, `sendSuspending` under a watermark).
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

    private init(current: @escaping @Sendable () -> Writability) {
        self.current = current
    }

    /// Suspends until the block that `register` hands on is called with a state (which it
    /// returns), or until the task is cancelled (then it returns `current()`, read at that moment).
    ///
    /// - Parameters:
    ///   - register: registers the block, which must be called at most once (a `whenWritable`).
    ///   - current: the state to answer when cancelled first.
    static func wait(
        registering register: (@escaping @Sendable (Writability) -> Void) -> Void,
        orOnCancel current: @escaping @Sendable () -> Writability
    ) async -> Writability {
        let waiting = OnceContinuation(current: current)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Writability, Never>) in
                waiting.set(continuation)
                register { state in waiting.resume(state) }
            }
        } onCancel: {
            waiting.resume(nil)
        }
    }

    /// Sets the continuation; resumes it at once if the answer came first.
    private func set(_ continuation: CheckedContinuation<Writability, Never>) {
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
    private func resume(_ answer: Writability?) {
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
