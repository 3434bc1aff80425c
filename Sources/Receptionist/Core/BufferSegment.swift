/// A fixed-capacity run of buffered elements, filled at the back and consumed from the front:
/// the unit in which a receptionist's buffer grows, shrinks and is handed to a drain.
///
/// A drain takes a whole segment out of the buffer under the lock (moving one reference), then
/// runs the task block on its elements outside the lock, moving each one out right before its
/// task block, so that each element is released as soon as its block returns.
///
/// Ownership, not a lock, makes it safe: a segment is reachable either from the buffer, which the
/// receptionist's lock (`Locked`) guards, or from the one drain that took it, never from both; it
/// changes hands only under that lock. Hence `@unchecked Sendable`.
@usableFromInline
final class BufferSegment<Element>: @unchecked Sendable {
    @usableFromInline
    let capacity: Int
    /// Slots `start..<end` are initialised; the others are not.
    @usableFromInline
    let elements: UnsafeMutablePointer<Element>
    // Unchecked: class properties otherwise get a dynamic exclusivity check on every access
    // (callgrind: ~80 instructions per element, the biggest single cost of a send). Accesses
    // never overlap: one owner at a time, as above.
    @usableFromInline @exclusivity(unchecked)
    var start = 0
    @usableFromInline @exclusivity(unchecked)
    var end = 0
    /// The next (newer) segment of the buffer's chain.
    @usableFromInline @exclusivity(unchecked)
    var next: BufferSegment?

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
        (elements + end).initialize(to: element)
        end += 1
    }

    /// - Precondition: not ``isEmpty``.
    @inlinable
    func removeFirst() -> Element {
        let element = (elements + start).move()
        start += 1
        return element
    }

    /// Moves the oldest `count` elements of `other` to the end of this segment.
    @inlinable
    func moveFirst(_ count: Int, from other: BufferSegment) {
        (elements + end).moveInitialize(from: other.elements + other.start, count: count)
        end += count
        other.start += count
    }

    /// Moves the newest `count` elements of `other` to the end of this segment.
    @inlinable
    func moveLast(_ count: Int, from other: BufferSegment) {
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
}
