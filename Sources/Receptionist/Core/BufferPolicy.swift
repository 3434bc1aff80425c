/// What a receptionist does with changes that arrive faster than its target runs them.
///
/// Changes wait in a first-in, first-out buffer between the thread that produced them and the
/// drain that runs the task block on the target. The policy bounds that buffer:
///
/// - ``unbounded``: every change is kept and delivered (the default; lossless).
/// - ``dropOldest(capacity:)``: at most `capacity` changes wait; a new change pushes out the
///   oldest waiting one. The consumer sees the most recent `capacity` changes.
/// - ``dropNewest(capacity:)``: at most `capacity` changes wait; a change that arrives when the
///   buffer is full is discarded. The consumer sees the first `capacity` changes of a burst.
///
/// Every discarded change is counted in ``ReceptionistStatistics/dropped``: nothing is lost
/// silently. Changes already handed to a running drain are not counted against the capacity.
public struct BufferPolicy: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case unbounded
        case dropOldest
        case dropNewest
    }

    @usableFromInline
    let kind: Kind
    /// The most changes that may wait; `nil` for ``unbounded``.
    public let capacity: Int?

    private init(kind: Kind, capacity: Int?) {
        self.kind = kind
        self.capacity = capacity
    }

    /// Keep every change until it is delivered.
    ///
    /// Memory follows the backlog both ways: the buffer grows in segments of up to 256 changes
    /// (about 16 KiB each), nothing already buffered is ever copied, and segments are given back
    /// as drains empty them (one empty segment is kept for the next burst).
    public static let unbounded = BufferPolicy(kind: .unbounded, capacity: nil)

    /// Keep at most `capacity` waiting changes; when full, discard the oldest waiting change.
    ///
    /// - Parameter capacity: the most changes that may wait. Must be at least 1; any other value
    ///   stops the program with a message naming `capacity`.
    public static func dropOldest(capacity: Int) -> BufferPolicy {
        BufferPolicy(kind: .dropOldest, capacity: validated(capacity, in: "dropOldest(capacity:)"))
    }

    /// Keep at most `capacity` waiting changes; when full, discard the change that just arrived.
    ///
    /// - Parameter capacity: the most changes that may wait. Must be at least 1; any other value
    ///   stops the program with a message naming `capacity`.
    public static func dropNewest(capacity: Int) -> BufferPolicy {
        BufferPolicy(kind: .dropNewest, capacity: validated(capacity, in: "dropNewest(capacity:)"))
    }

    public var description: String {
        switch kind {
        case .unbounded: "unbounded"
        case .dropOldest: "dropOldest(capacity: \(capacity!))"
        case .dropNewest: "dropNewest(capacity: \(capacity!))"
        }
    }

    private static func validated(_ capacity: Int, in function: String) -> Int {
        precondition(
            capacity >= 1,
            "Receptionist: BufferPolicy.\(function): capacity must be at least 1, got \(capacity)"
        )
        return capacity
    }
}
