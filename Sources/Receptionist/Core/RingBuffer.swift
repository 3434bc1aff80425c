/// A first-in, first-out queue backed by a growable circular buffer.
///
/// Appending and removing from the front are amortised O(1). Capacity grows by doubling and
/// shrinks (by halving, as often as needed) once the buffer is at most a quarter full, so a burst that was drained
/// does not pin its peak memory for the lifetime of the receptionist.
///
/// Not thread-safe: it lives inside a state machine that a `Mutex` guards.
@usableFromInline
struct RingBuffer<Element> {
    @usableFromInline
    var storage: ContiguousArray<Element?>
    @usableFromInline
    var head = 0
    @usableFromInline
    var count = 0

    /// The capacity below which the buffer never shrinks.
    @inlinable
    static var minimumCapacity: Int { 16 }

    @inlinable
    init() {
        storage = ContiguousArray(repeating: nil, count: Self.minimumCapacity)
    }

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// The number of slots currently allocated.
    @inlinable
    var capacity: Int { storage.count }

    @inlinable
    mutating func append(_ element: Element) {
        if count == storage.count {
            resize(to: storage.count * 2)
        }
        storage[slot(count)] = element
        count += 1
    }

    /// Removes and returns the oldest element.
    ///
    /// - Precondition: the buffer is not empty.
    @inlinable
    mutating func removeFirst() -> Element {
        precondition(count > 0, "Internal inconsistency: removeFirst() on an empty RingBuffer")
        let element = storage[head].take()!
        head = slot(1)
        count -= 1
        shrinkIfSparse()
        return element
    }

    /// Moves up to `maxCount` of the oldest elements, in order, to the end of `destination`.
    ///
    /// - Returns: the number of elements moved.
    @inlinable
    @discardableResult
    mutating func moveFirst(_ maxCount: Int, to destination: inout [Element]) -> Int {
        let moved = Swift.min(maxCount, count)
        for _ in 0..<moved {
            destination.append(storage[head].take()!)
            head = slot(1)
        }
        count -= moved
        shrinkIfSparse()
        return moved
    }

    /// Removes every element and returns them, oldest first.
    ///
    /// Callers use this to release elements outside the lock that guards the buffer.
    @inlinable
    mutating func removeAll() -> [Element] {
        var all: [Element] = []
        all.reserveCapacity(count)
        moveFirst(count, to: &all)
        return all
    }

    @inlinable
    func slot(_ offset: Int) -> Int {
        let index = head + offset
        return index < storage.count ? index : index - storage.count
    }

    @inlinable
    mutating func shrinkIfSparse() {
        if count == 0 { head = 0 }
        guard storage.count > Self.minimumCapacity && count <= storage.count / 4 else { return }
        var newCapacity = storage.count / 2
        while newCapacity > Self.minimumCapacity && count <= newCapacity / 4 {
            newCapacity /= 2
        }
        resize(to: newCapacity)
    }

    @inlinable
    mutating func resize(to newCapacity: Int) {
        var newStorage = ContiguousArray<Element?>(repeating: nil, count: newCapacity)
        for offset in 0..<count {
            newStorage[offset] = storage[slot(offset)].take()
        }
        storage = newStorage
        head = 0
    }
}
