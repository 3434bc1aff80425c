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
/// - ``waiting(capacity:)``: at most `capacity` changes wait; a sender that finds the buffer full
///   waits for room (back-pressure), and waiting senders are woken together once half the
///   capacity is free (all of it, in front of a pipeline's stages). Nothing is lost.
///
/// Every discarded change is counted in ``ReceptionistStatistics/dropped``: nothing is lost
/// silently. Changes already handed to a running drain are not counted against the capacity.
///
/// In a pipeline with stages, a bounded policy also bounds the buffer in front of the stages: with
/// a dropping policy, an element that finds `capacity` elements waiting for them is dropped there
/// (the newest, since the stages see their input in order) and counted as received and dropped;
/// with ``waiting(capacity:)``, its sender waits there, while the outputs behind the stages stand
/// for `capacity` elements or more. So memory stays bounded however fast and however many the
/// senders are.
public struct BufferPolicy: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case unbounded
        case dropOldest
        case dropNewest
        case waiting
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

    /// Keep at most `capacity` waiting changes; when full, the sender waits for room: a thread
    /// calling ``Receptionist/send(_:)`` blocks, a task calling
    /// ``Receptionist/sendSuspending(_:)`` suspends. Nothing is dropped, and memory stays within
    /// a few capacities however fast and however many the producers are, with or without stages.
    /// The capacity counts elements on both sides of stages: `capacity` wait in front of them, and
    /// the stages take more only while the outputs behind them stand for fewer than `capacity`
    /// elements (an output stands for the elements the stages took since the previous one: a
    /// batch for its elements). The stages never wait; the senders do.
    ///
    /// Waiting senders are woken together once the buffer has drained to half its capacity (in
    /// front of stages: once it is empty), or when the receptionist is cancelled or finishes
    /// (their sends then return `false`). Where
    /// waiting would deadlock (in
    /// a task block of the same receptionist, on its target's queue, on the main thread for a
    /// main-actor target, in a Swift task for an actor target), a `send` that finds the buffer
    /// full is refused instead, returning `false` at once. The exact rules:
    /// <doc:ThreadingGuarantees#Back-pressure>.
    ///
    /// - Parameter capacity: the most changes that may wait. Must be at least 1; any other value
    ///   stops the program with a message naming `capacity`.
    public static func waiting(capacity: Int) -> BufferPolicy {
        BufferPolicy(kind: .waiting, capacity: validated(capacity, in: "waiting(capacity:)"))
    }

    public var description: String {
        switch kind {
        case .unbounded: "unbounded"
        case .dropOldest: "dropOldest(capacity: \(capacity!))"
        case .dropNewest: "dropNewest(capacity: \(capacity!))"
        case .waiting: "waiting(capacity: \(capacity!))"
        }
    }

    private static func validated(_ capacity: Int, in function: String) -> Int {
        validate(capacity >= 1, "BufferPolicy.\(function): capacity must be at least 1, got \(capacity)")
        return capacity
    }
}
