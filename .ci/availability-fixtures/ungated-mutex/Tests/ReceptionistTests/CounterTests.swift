@preconcurrency import Synchronization
import Testing

@Test func counts() {
    let seen = Atomic<Int>(0)
    #expect(seen.load(ordering: .relaxed) == 0)
}
