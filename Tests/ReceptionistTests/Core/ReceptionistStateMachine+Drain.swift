@testable import Receptionist

extension ReceptionistStateMachine {
    /// One step of a drain as tests see it.
    enum DrainStep {
        /// Elements were handed out (collected into the caller's chunk).
        case deliver
        /// The drain used its budget and more is pending.
        case yield
        /// Nothing left; carries the handler if this step released it.
        case stop(releasedHandler: Handler?)
    }

    /// One step of a drain as ``ReceptionistCore`` performs it, with the elements it would run
    /// collected in `chunk`: takes up to `maxCount` of the oldest elements, runs them and gives
    /// the emptied segment back.
    @discardableResult
    mutating func nextChunk(into chunk: inout [Element], maxCount: Int) -> DrainStep {
        let (action, releasedHandler) = nextSegment(budget: maxCount)
        switch action {
        case .deliver(let segment, _):
            precondition(segment.count <= maxCount, "a drain is never handed more than its budget")
            while !segment.isEmpty {
                chunk.append(segment.removeFirst())
            }
            var returned: BufferSegment<Element>? = segment
            giveBack(&returned)
            return .deliver
        case .yield:
            return .yield
        case .stop:
            return .stop(releasedHandler: releasedHandler)
        }
    }
}
