/// A fixed-capacity run of buffered elements, filled at the back and consumed from the front:
/// the unit in which a receptionist's buffer grows, shrinks and is handed to a drain.
///
/// A drain takes a whole segment out of the buffer under the lock (moving one reference), then
/// runs the task block on its elements outside the lock, moving each one out right before its
/// task block, so that each element is released as soon as its block returns.
///
/// The one type of the buffer that touches raw memory (as swift-collections' `_UnsafeHandle`
/// does for `Deque`): ``SegmentedQueue`` and the drain reach the elements only through the
/// methods below, which state their preconditions and check them in debug builds.
///
/// Invariant: `0 <= start <= end <= capacity`; slots `start..<end` are initialised, the others
/// are not.
///
/// Ownership, not a lock, makes it safe to share: a segment is reachable either from the buffer,
/// which the receptionist's lock (`Locked`) guards, or from the one drain that took it, never from
/// both; it changes hands only under that lock.
@usableFromInline
// Unsafe: handed between threads under the machine's lock, one owner at a time (test: DrainLoopStressTests)
final class BufferSegment<Element>: @unchecked Sendable {
    @usableFromInline
    let capacity: Int
    /// Slots `start..<end` are initialised; the others are not.
    @usableFromInline
    // Unsafe: elements kept in place, each moved out once, no array checks (row: "receptionist → DispatchQueue")
    let elements: UnsafeMutablePointer<Element>
    /// The segment's bookkeeping, reached through the properties below.
    @usableFromInline
    struct Bookkeeping {
        @usableFromInline var start = 0
        @usableFromInline var end = 0
        @usableFromInline var next: BufferSegment?
        @usableFromInline var startedAt: UInt64 = 0

        @inlinable
        init() {}
    }

    // Unchecked, so that the class property touched for every element gets no dynamic
    // exclusivity check, which every send would otherwise pay (the first row below). `next` and
    // `startedAt` are touched once per segment, but a pipeline's intake drained one element at a
    // time takes a segment per element: each of their checks cost the writers about 70
    // instructions per element, three per element in all (the second row below).
    // Accesses never overlap: one owner at a time, as above.
    @usableFromInline
    // Unsafe: no exclusivity check per element or per segment; one owner at a time (row: "receptionist → DispatchQueue"; row: "@Observed var quote, 3 observations (throttle, batch, coalesce)")
    @exclusivity(unchecked) var bookkeeping = Bookkeeping()

    /// The slot of the oldest element.
    @inlinable
    var start: Int {
        get { bookkeeping.start }
        _modify { yield &bookkeeping.start }
    }

    /// The slot after the newest element.
    @inlinable
    var end: Int {
        get { bookkeeping.end }
        _modify { yield &bookkeeping.end }
    }

    /// The next (newer) segment of the buffer's chain.
    @inlinable
    var next: BufferSegment? {
        get { bookkeeping.next }
        _modify { yield &bookkeeping.next }
    }

    /// When the segment's first element was buffered (``DeliveryClock`` nanoseconds; 0 if not
    /// stamped): the age of its oldest element.
    @inlinable
    var startedAt: UInt64 {
        get { bookkeeping.startedAt }
        _modify { yield &bookkeeping.startedAt }
    }

    @usableFromInline
    init(capacity: Int) {
        precondition(capacity >= 1, "Internal inconsistency: a buffer segment needs room for an element")
        self.capacity = capacity
        self.elements = .allocate(capacity: capacity)
    }

    deinit {
        (elements + start).deinitialize(count: end - start)
        elements.deallocate()
        // Release the rest of the chain in a loop: letting each segment release its successor
        // from its own deinit would recurse once per segment, and a backlog of millions of
        // elements is thousands of segments.
        var successor = next.take()
        while var segment = successor.take() {
            guard isKnownUniquelyReferenced(&segment) else { break }
            successor = segment.next.take()
        }
    }

    @inlinable
    var count: Int { end - start }

    @inlinable
    var isEmpty: Bool { start == end }

    @inlinable
    var hasRoom: Bool { end < capacity }

    /// - Precondition: ``hasRoom``.
    @inlinable
    func append(_ element: consuming Element) {
        assert(hasRoom, "Internal inconsistency: append to a full segment")
        (elements + end).initialize(to: element)
        end += 1
    }

    /// - Precondition: not ``isEmpty``.
    @inlinable
    func removeFirst() -> Element {
        assert(!isEmpty, "Internal inconsistency: removeFirst() on an empty segment")
        let element = (elements + start).move()
        start += 1
        return element
    }

    /// Changes the newest element in place.
    ///
    /// - Precondition: not ``isEmpty``.
    @inlinable
    func updateLast(_ body: (inout Element) -> Void) {
        assert(!isEmpty, "Internal inconsistency: updateLast on an empty segment")
        body(&(elements + (end - 1)).pointee)
    }

    /// Moves the oldest `count` elements of `other` to the end of this segment.
    ///
    /// - Precondition: `other` holds `count` elements, and this segment has room for them.
    @inlinable
    func moveFirst(_ count: Int, from other: BufferSegment) {
        assert(count <= other.count && end + count <= capacity, "Internal inconsistency: moveFirst(\(count))")
        (elements + end).moveInitialize(from: other.elements + other.start, count: count)
        end += count
        other.start += count
    }

    /// Moves the newest `count` elements of `other` to the end of this segment.
    ///
    /// - Precondition: `other` holds `count` elements, and this segment has room for them.
    @inlinable
    func moveLast(_ count: Int, from other: BufferSegment) {
        assert(count <= other.count && end + count <= capacity, "Internal inconsistency: moveLast(\(count))")
        (elements + end).moveInitialize(from: other.elements + (other.end - count), count: count)
        end += count
        other.end -= count
    }

    /// Makes an emptied segment ready to be filled again.
    @inlinable
    func reset() {
        precondition(isEmpty, "Internal inconsistency: reset of a segment holding \(count) elements")
        start = 0
        end = 0
        next = nil
    }

    /// Copies of the elements, oldest first, left in place (for tests and diagnostics).
    var copiedElements: [Element] {
        (start..<end).map { elements[$0] }
    }
}
