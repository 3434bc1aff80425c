@testable import Receptionist

extension ReceptionistStateMachine {
    /// One step of a drain as ``ReceptionistCore`` performs it, with the elements it would run
    /// collected in `chunk`: takes up to `maxCount` of the oldest elements, runs them and gives
    /// the emptied segment back.
    @discardableResult
    mutating func nextChunk(into chunk: inout [Element], maxCount: Int) -> DrainAction {
        let action = nextSegment(budget: maxCount)
        if case .deliver(let segment, _) = action {
            precondition(segment.count <= maxCount, "a drain is never handed more than its budget")
            while !segment.isEmpty {
                chunk.append(segment.removeFirst())
            }
            var returned: BufferSegment<Element>? = segment
            giveBack(&returned)
        }
        return action
    }
}
