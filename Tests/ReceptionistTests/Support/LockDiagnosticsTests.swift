import Testing

@testable import Receptionist

/// The debug lock count that the release tests rely on: it must see a lock held, or their
/// "outside" verdicts would prove nothing.
@Suite struct LockDiagnosticsTests {
    @Test func countsTheLibrarysLocksTheThreadHolds() throws {
        try #require(LockDiagnostics.isTracking, "the suite runs in a debug build")
        let outer = Locked(0)
        let inner = Locked(0)
        #expect(LockDiagnostics.locksHeldByCurrentThread == 0)
        outer.withLock { _ in
            #expect(LockDiagnostics.locksHeldByCurrentThread == 1)
            inner.withLock { _ in #expect(LockDiagnostics.locksHeldByCurrentThread == 2) }
            #expect(LockDiagnostics.locksHeldByCurrentThread == 1)
        }
        #expect(LockDiagnostics.locksHeldByCurrentThread == 0)
        Locked(uncounted: 0).withLock { _ in
            #expect(LockDiagnostics.locksHeldByCurrentThread == 0, "a stand-in for a user's lock is not counted")
        }
    }

    @Test func aProbeReleasedUnderALockSaysSoAndTheHelperReleasesAfterTheUnlock() throws {
        try #require(LockDiagnostics.isTracking, "the suite runs in a debug build")
        let log = Recorder<String>()
        let state = Locked<ReleaseProbe?>(ReleaseProbe("replaced in place", log: log))
        state.withLock { $0 = ReleaseProbe("set aside", log: log) }  // the first dies here, under the lock
        state.withLockThenRelease { probe in
            let replaced = probe
            probe = nil
            return ((), released: replaced)
        }
        #expect(log.values == ["replaced in place: under 1 lock(s)", "set aside: outside"])
    }
}
