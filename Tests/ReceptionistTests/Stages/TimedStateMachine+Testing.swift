@testable import Receptionist

/// Actions compare by what the stage does with them: the outputs handed on and the timer. What
/// a machine releases is checked separately, where it matters.
extension TimedStageAction: Equatable where Input: Equatable, Output: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.outputs == rhs.outputs && lhs.timer == rhs.timer
    }
}

extension ThrottleStateMachine {
    /// Whether an element is held for the end of the window.
    var isHolding: Bool { held != nil }
}

extension DebounceStateMachine {
    /// Whether an element waits for the quiet time.
    var isHolding: Bool { pending != nil }
}

extension BatchStateMachine {
    /// The elements of the open batch.
    var pendingCount: Int {
        if case .collecting(let batch, _) = state { return batch.count }
        return 0
    }
}

extension ReceptionistStateMachine {
    /// The elements waiting in the buffer.
    var pendingCount: Int { buffer.count }
}
