/// A first-in, first-out queue stored as a chain of fixed-size ``BufferSegment``s.
///
/// Chosen over a growable ring buffer for what a receptionist's buffer does under load:
/// - appending never copies what is already buffered (a ring buffer doubles and moves every
///   element, touching twice the memory at the worst moment, under the lock);
/// - memory follows the backlog both ways: segments are allocated as it grows and let go as
///   drains empty them, with one spare kept so that a steady trickle allocates nothing;
/// - a drain takes a whole segment by reference instead of moving elements one by one under the
///   lock (when it may run fewer elements than the oldest segment holds, the segment is split
///   with one bulk move of the smaller part).
///
/// Not thread-safe: it lives inside a state machine that a lock (`Locked`) guards.
@usableFromInline
struct SegmentedQueue<Element> {
    @usableFromInline
    var head: BufferSegment<Element>?
    /// The segment appends go to; `nil` when the queue is empty.
    @usableFromInline
    var tail: BufferSegment<Element>?
    /// An empty segment kept for the next append that needs one.
    @usableFromInline
    var spare: BufferSegment<Element>?
    @usableFromInline
    var count = 0
    @usableFromInline
    let segmentCapacity: Int
    /// Stamps each segment as it starts to fill (one clock read per segment, not per element):
    /// how long the oldest element has waited (``ReceptionistStatistics/Timing``).
    @usableFromInline
    let clock: DeliveryClock

    /// The number of elements per segment, unless a smaller `limit` is given.
    ///
    /// Segments of about 16 KiB, between 16 and 256 elements: 256 is the default drain budget,
    /// so a flood costs one lock round trip per drain, not per element.
    static func defaultSegmentCapacity(limit: Int? = nil) -> Int {
        let byStride = 16_384 / Swift.max(1, MemoryLayout<Element>.stride)
        let capacity = Swift.min(256, Swift.max(16, byStride))
        return limit.map { Swift.max(1, Swift.min($0, capacity)) } ?? capacity
    }

    init(segmentCapacity: Int = Self.defaultSegmentCapacity(), clock: DeliveryClock = .system) {
        precondition(segmentCapacity >= 1, "Internal inconsistency: segment capacity \(segmentCapacity)")
        self.segmentCapacity = segmentCapacity
        self.clock = clock
    }

    /// When the oldest element was buffered, to the segment (``BufferSegment/startedAt``); `nil`
    /// when empty.
    @inlinable
    var oldestStartedAt: UInt64? { head?.startedAt }

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// Whether the tail takes no more appends: a drain split it (see ``takeFirst(upTo:)``).
    @usableFromInline
    var tailIsSealed = false

    @inlinable
    mutating func append(_ element: consuming Element) {
        // Consumed (moved in), not copied: a copy of a change that holds references would retain
        // them, under the sender's lock.
        if !tailIsSealed, let tail, tail.hasRoom {
            tail.append(consume element)
        } else {
            appendToNewSegment(consume element)
        }
        count += 1
    }

    @inlinable
    mutating func appendToNewSegment(_ element: consuming Element) {
        let segment = spare.take() ?? BufferSegment(capacity: segmentCapacity)
        segment.append(consume element)
        segment.startedAt = clock.now()
        tailIsSealed = false
        if let tail {
            tail.next = segment
        } else {
            head = segment
        }
        tail = segment
    }

    /// Folds `element` into the newest element in place with a coalescing merge; `element` is
    /// left holding what the merge let go of.
    ///
    /// - Precondition: not empty.
    @inlinable
    mutating func mergeIntoLast(_ element: inout Element, with merge: (inout Element, inout Element) -> Void) {
        tail!.updateLast { merge(&$0, &element) }
    }

    /// Changes the newest element in place.
    ///
    /// - Precondition: not empty.
    @inlinable
    mutating func updateLast(_ body: (inout Element) -> Void) {
        tail!.updateLast(body)
    }

    /// Removes and returns the oldest element.
    ///
    /// - Precondition: not empty.
    @inlinable
    mutating func removeFirst() -> Element {
        precondition(count > 0, "Internal inconsistency: removeFirst() on an empty queue")
        let segment = head!
        let element = segment.removeFirst()
        count -= 1
        if segment.isEmpty {
            recycle(takeFirstSegment()!)
        }
        return element
    }

    /// Detaches the oldest segment with everything in it; the caller owns it from now on.
    @inlinable
    mutating func takeFirstSegment() -> BufferSegment<Element>? {
        guard let segment = head else { return nil }
        head = segment.next.take()
        if head == nil { tail = nil }
        count -= segment.count
        return segment
    }

    /// Detaches the oldest elements, at most `maxCount` of them, as one segment; the caller owns
    /// it from now on.
    ///
    /// The oldest segment is taken whole if it holds no more than `maxCount`; otherwise it is
    /// split, moving the smaller part into a new segment.
    @inlinable
    mutating func takeFirst(upTo maxCount: Int) -> BufferSegment<Element>? {
        guard let segment = head, maxCount > 0 else { return nil }
        let available = segment.count
        if available <= maxCount { return takeFirstSegment() }
        let part = spare.take() ?? BufferSegment(capacity: segmentCapacity)
        // Either part may hold the oldest elements; both keep the stamp of the whole (the newer
        // part's age is overstated by at most the time the segment took to fill).
        part.startedAt = segment.startedAt
        count -= maxCount
        // A split tail takes no more appends: the next starts a segment with a stamp of its own.
        // (Appends to what is left, split after split, would pass the first stamp on without end.)
        if segment === tail { tailIsSealed = true }
        if maxCount <= available - maxCount {
            // Hand out the oldest elements in the new segment; the rest stays where it is.
            part.moveFirst(maxCount, from: segment)
            return part
        }
        // Keep the newest elements in the new segment, in the old one's place; hand that out.
        part.moveLast(available - maxCount, from: segment)
        part.next = segment.next.take()
        head = part
        if tail === segment { tail = part }
        return segment
    }

    /// Keeps an emptied segment as the spare, unless there is one already.
    ///
    /// - Returns: the segment if it was not kept, for the caller to release.
    @inlinable
    @discardableResult
    mutating func recycle(_ segment: BufferSegment<Element>) -> BufferSegment<Element>? {
        guard spare == nil, segment.capacity == segmentCapacity else { return segment }
        segment.reset()
        spare = segment
        return nil
    }

    /// Empties the queue and returns everything it held, oldest first, as a queue: the caller
    /// releases it (and its elements) outside the lock.
    mutating func removeAll() -> SegmentedQueue<Element> {
        var all = SegmentedQueue(segmentCapacity: segmentCapacity, clock: clock)
        swap(&all.head, &head)
        swap(&all.tail, &tail)
        swap(&all.count, &count)
        return all
    }
}

// Its segments change hands only under the lock of the state machine that holds it.
extension SegmentedQueue: Sendable where Element: Sendable {}
