import Testing

@testable import Receptionist

@Suite struct RingBufferTests {
    @Test func keepsFirstInFirstOutAcrossWrapAround() {
        var buffer = RingBuffer<Int>()
        var expected: [Int] = []
        var next = 0
        // Interleave appends and removals so head wraps around the storage many times.
        for round in 0..<200 {
            for _ in 0..<(round % 7 + 1) {
                buffer.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round % 5) where !expected.isEmpty {
                #expect(buffer.removeFirst() == expected.removeFirst())
            }
            #expect(buffer.count == expected.count)
        }
        #expect(buffer.removeAll() == expected)
        #expect(buffer.isEmpty)
    }

    @Test func movesAChunkInOrder() {
        var buffer = RingBuffer<String>()
        for index in 0..<40 { buffer.append("e\(index)") }
        var chunk: [String] = []
        #expect(buffer.moveFirst(15, to: &chunk) == 15)
        #expect(chunk == (0..<15).map { "e\($0)" })
        #expect(buffer.moveFirst(100, to: &chunk) == 25)
        #expect(chunk == (0..<40).map { "e\($0)" })
        #expect(buffer.isEmpty)
        #expect(buffer.moveFirst(3, to: &chunk) == 0)
    }

    @Test func growsAndShrinksBackAfterABurst() {
        var buffer = RingBuffer<Int>()
        for index in 0..<100_000 { buffer.append(index) }
        #expect(buffer.capacity >= 100_000)
        var chunk: [Int] = []
        buffer.moveFirst(99_990, to: &chunk)
        #expect(chunk.last == 99_989)
        #expect(buffer.capacity <= 64, "a drained buffer gives its memory back")
        #expect(buffer.removeAll() == Array(99_990..<100_000))
        #expect(buffer.capacity == RingBuffer<Int>.minimumCapacity)
    }

    @Test func releasesElementsItNoLongerHolds() {
        let counter = LifetimeCounter()
        var buffer = RingBuffer<LifetimeWitness>()
        for _ in 0..<10 { buffer.append(LifetimeWitness(counter)) }
        _ = buffer.removeFirst()
        #expect(counter.deinitialized == 1)
        var chunk: [LifetimeWitness] = []
        buffer.moveFirst(4, to: &chunk)
        #expect(counter.deinitialized == 1, "moved, not released")
        chunk.removeAll()
        #expect(counter.deinitialized == 5)
        _ = buffer.removeAll()
        #expect(counter.deinitialized == 10)
    }
}
