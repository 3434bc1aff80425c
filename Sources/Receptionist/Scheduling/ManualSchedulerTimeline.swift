/// The timeline of a ``ManualScheduler``, as a plain value: scheduled work in a binary min-heap
/// keyed by (deadline, submission number), the current time, and whether an advance is running.
///
/// ``ManualScheduler`` keeps one of these in a `Locked`, calls one `mutating func` per event
/// under the lock, and runs the work the timeline hands out after the lock is released.
/// Generic over the work so that tests can drive it with plain values.
///
/// Invariants:
/// - `now` never moves backwards;
/// - while advancing, ``nextDue()`` hands out entries in (deadline, submission) order and only
///   those due at or before the target; when none is left, `now` becomes the target and the
///   timeline is idle again;
/// - at most one advance runs at a time.
struct ManualSchedulerTimeline<Work: Sendable>: Sendable {
    private struct Entry {
        let deadline: SchedulerInstant
        let sequence: UInt64
        let work: Work

        func runsBefore(_ other: Entry) -> Bool {
            (deadline, sequence) < (other.deadline, other.sequence)
        }
    }

    private enum State {
        case idle
        case advancing(target: SchedulerInstant)
    }

    /// Why an advance cannot start.
    enum AdvanceRejection: Equatable {
        /// `advance(by:)` was given a negative duration.
        case negativeDuration
        /// `advance(to:)` was given a target before `now`.
        case targetBeforeNow(now: SchedulerInstant)
        /// An advance is already running (re-entrantly, or on another thread).
        case alreadyAdvancing
    }

    /// What the advancing caller does next.
    enum AdvanceStep {
        /// Run this work (outside the lock), then ask again.
        case run(Work)
        /// Nothing more is due: the advance is over and `now` is the target.
        case finished
    }

    private(set) var now: SchedulerInstant = .zero
    private var state: State = .idle
    private var heap: [Entry] = []
    private var nextSequence: UInt64 = 0

    var isAdvancing: Bool {
        if case .advancing = state { return true }
        return false
    }

    /// Every scheduled entry not yet handed out, in no particular order.
    var scheduled: [(deadline: SchedulerInstant, work: Work)] {
        heap.map { ($0.deadline, $0.work) }
    }

    /// Schedules `work` at `deadline`, after everything already scheduled at the same deadline.
    mutating func schedule(_ work: Work, at deadline: SchedulerInstant) {
        heap.append(Entry(deadline: deadline, sequence: nextSequence, work: work))
        nextSequence += 1
        siftUp(from: heap.count - 1)
    }

    /// A test asked to advance by `duration`.
    ///
    /// - Returns: `nil` if the advance started (call ``nextDue()`` until it says `.finished`),
    ///   or why it was rejected.
    mutating func startAdvancing(by duration: Duration) -> AdvanceRejection? {
        guard duration >= .zero else { return .negativeDuration }
        return startAdvancing(to: now + duration)
    }

    /// A test asked to advance to `target`.
    ///
    /// - Returns: `nil` if the advance started (call ``nextDue()`` until it says `.finished`),
    ///   or why it was rejected.
    mutating func startAdvancing(to target: SchedulerInstant) -> AdvanceRejection? {
        guard !isAdvancing else { return .alreadyAdvancing }
        guard target >= now else { return .targetBeforeNow(now: now) }
        state = .advancing(target: target)
        return nil
    }

    /// The advancing caller is ready for the next work item.
    mutating func nextDue() -> AdvanceStep {
        guard case .advancing(let target) = state else {
            preconditionFailure("Internal inconsistency: nextDue() while \(state)")
        }
        if let first = heap.first, first.deadline <= target {
            let entry = removeFirst()
            now = max(now, entry.deadline)
            return .run(entry.work)
        }
        now = target
        state = .idle
        return .finished
    }

    // MARK: Heap

    private mutating func removeFirst() -> Entry {
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(from: 0)
        }
        return first
    }

    private mutating func siftUp(from index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].runsBefore(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].runsBefore(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].runsBefore(heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
