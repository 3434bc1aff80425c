extension SegmentedQueue {
    /// The elements, oldest first (for tests and diagnostics: copies every element).
    var elements: [Element] {
        var result: [Element] = []
        result.reserveCapacity(count)
        var segment = head
        while let current = segment {
            result.append(contentsOf: current.copiedElements)
            segment = current.next
        }
        return result
    }

    /// The number of segments in the chain (for tests).
    var segmentCount: Int {
        var result = 0
        var segment = head
        while let current = segment {
            result += 1
            segment = current.next
        }
        return result
    }
}
