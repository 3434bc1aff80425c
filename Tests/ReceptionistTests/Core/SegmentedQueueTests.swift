import Testing

@testable import Receptionist

@Suite struct SegmentedQueueTests {
    @Test func keepsFirstInFirstOutAcrossSegments() {
        var queue = SegmentedQueue<Int>(segmentCapacity: 4)
        var expected: [Int] = []
        var next = 0
        // Interleave appends and removals so that segments fill, empty and are reused many times.
        for round in 0..<200 {
            for _ in 0..<(round % 7 + 1) {
                queue.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round % 5) where !expected.isEmpty {
                #expect(queue.removeFirst() == expected.removeFirst())
            }
            #expect(queue.count == expected.count)
            #expect(queue.elements == expected)
            #expect(
                queue.segmentCount == (expected.count + 3) / 4 || queue.segmentCount == (expected.count + 3) / 4 + 1)
        }
        let all = queue.removeAll()
        #expect(all.elements == expected)
        #expect(queue.isEmpty)
        #expect(queue.segmentCount == 0)
    }

    @Test func takesWholeSegmentsOldestFirst() {
        var queue = SegmentedQueue<String>(segmentCapacity: 16)
        for index in 0..<40 { queue.append("e\(index)") }
        #expect(queue.segmentCount == 3)
        let first = queue.takeFirstSegment()!
        #expect(first.count == 16)
        #expect(queue.count == 24)
        #expect(first.removeFirst() == "e0")
        // Appends after a segment was taken go behind what is still buffered.
        queue.append("e40")
        var drained: [String] = []
        while let segment = queue.takeFirstSegment() {
            while !segment.isEmpty { drained.append(segment.removeFirst()) }
        }
        #expect(drained == (16...40).map { "e\($0)" })
        #expect(queue.isEmpty)
    }

    @Test func takesAtMostTheAskedNumberSplittingTheSmallerPartOff() {
        for available in 1...9 {
            for maxCount in 1...10 {
                var queue = SegmentedQueue<Int>(segmentCapacity: 8)
                for value in 0..<available { queue.append(value) }
                // With 8 or more, a second segment behind the first.
                queue.append(100)
                let all = Array(0..<available) + [100]
                let inFirstSegment = Swift.min(available + 1, 8)
                let taken = queue.takeFirst(upTo: maxCount)!
                let expectedCount = Swift.min(maxCount, inFirstSegment)
                var run: [Int] = []
                while !taken.isEmpty { run.append(taken.removeFirst()) }
                #expect(run == Array(all.prefix(expectedCount)), "available \(available), maxCount \(maxCount)")
                #expect(queue.elements == Array(all.dropFirst(expectedCount)))
                #expect(queue.count == all.count - expectedCount)
                // Appends still land behind everything.
                queue.append(200)
                #expect(queue.elements.last == 200)
            }
        }
    }

    @Test func memoryFollowsTheBacklogAndOneSpareIsKept() {
        var queue = SegmentedQueue<Int>(segmentCapacity: 16)
        for value in 0..<1_000 { queue.append(value) }
        #expect(queue.segmentCount == 63)
        var released = 0
        while let segment = queue.takeFirstSegment() {
            while !segment.isEmpty { _ = segment.removeFirst() }
            if queue.recycle(segment) != nil { released += 1 }
        }
        #expect(released == 62, "every emptied segment but the spare is let go")
        #expect(queue.spare != nil)
        // The spare serves the next append: no allocation for a trickle.
        let spare = queue.spare!
        queue.append(1)
        #expect(queue.head === spare)
        #expect(queue.spare == nil)
    }

    @Test func mergesIntoTheNewestElementInPlace() {
        var queue = SegmentedQueue<[Int]>(segmentCapacity: 1)
        queue.append([1])
        var new = [2]
        queue.mergeIntoLast(&new) { pending, new in
            swap(&pending, &new)
            pending = new + pending
        }
        #expect(queue.elements == [[1, 2]])
        #expect(new == [1], "the merge leaves what it let go of in `new`")
        #expect(queue.count == 1)
    }

    @Test func releasesElementsExactlyOnce() {
        let counter = LifetimeCounter()
        do {
            var queue = SegmentedQueue<LifetimeWitness>(segmentCapacity: 4)
            for _ in 0..<10 { queue.append(LifetimeWitness(counter)) }
            let taken = queue.takeFirstSegment()!
            _ = taken.removeFirst()  // released at once
            #expect(counter.deinitialized == 1)
            _ = queue.removeFirst()
            #expect(counter.deinitialized == 2)
            // `taken` (3 left) and the queue (5 left) release the rest when they go.
        }
        #expect(counter.deinitialized == 10)
    }

    @Test func aLongChainIsReleasedWithoutRecursion() {
        // 2 million one-element segments: a recursive release would overflow the stack.
        var queue = SegmentedQueue<Int>(segmentCapacity: 1)
        for value in 0..<2_000_000 { queue.append(value) }
        #expect(queue.segmentCount == 2_000_000)
        let all = queue.removeAll()
        #expect(all.count == 2_000_000)
        _ = consume all
        #expect(queue.isEmpty)
    }

    @Test func segmentCapacityDependsOnElementSizeAndLimit() {
        #expect(SegmentedQueue<Int>.defaultSegmentCapacity() == 256)
        #expect(SegmentedQueue<Int>.defaultSegmentCapacity(limit: 3) == 3)
        #expect(SegmentedQueue<(Int, Int, Int, Int)>.defaultSegmentCapacity() == 256)
        typealias Big = (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int)
        #expect(SegmentedQueue<Big>.defaultSegmentCapacity() == 128)
        #expect(SegmentedQueue<(Big, Big, Big, Big, Big, Big, Big, Big)>.defaultSegmentCapacity() == 16)
    }
}
