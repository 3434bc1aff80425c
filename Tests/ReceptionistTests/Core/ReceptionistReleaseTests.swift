import Testing

@testable import Receptionist

/// An event whose deinit records whether its thread holds one of the library's locks (the
/// receptionist's among them), as ``LockDiagnostics`` counts them in debug builds: exact, where
/// giving another thread 2 s to take the lock read "under the lock" on a loaded machine.
private final class LockProbe: Sendable {
    let name: String
    let verdicts: Recorder<String>

    init(_ name: String, verdicts: Recorder<String>) {
        self.name = name
        self.verdicts = verdicts
    }

    deinit {
        let outside = LockDiagnostics.locksHeldByCurrentThread == 0
        verdicts.append("\(name): \(outside ? "outside" : "under the lock")")
    }
}

/// Events a receptionist does not keep (dropped, rejected, evicted) are released after its lock
/// is released: their deinit is user code.
@Suite struct ReceptionistReleaseTests {
    @Test func eventsThatAreNotKeptAreReleasedOutsideTheLock() throws {
        try #require(LockDiagnostics.isTracking, "the suite runs in a debug build")
        let verdicts = Recorder<String>()
        let target = ManualTarget()
        let newest = Receptionist<LockProbe?>(on: target, buffering: .dropNewest(capacity: 1)) { _ in }
        let oldest = Receptionist<LockProbe?>(on: target, buffering: .dropOldest(capacity: 1)) { _ in }
        func probe(_ name: String) -> LockProbe { LockProbe(name, verdicts: verdicts) }
        newest.send(nil)
        newest.send(probe("dropped by dropNewest"))
        oldest.send(probe("evicted by dropOldest"))
        oldest.send(nil)
        newest.cancel()
        newest.send(probe("rejected after cancel"))
        target.runAll()
        #expect(
            verdicts.values.sorted() == [
                "dropped by dropNewest: outside", "evicted by dropOldest: outside", "rejected after cancel: outside",
            ])
    }

    @Test func eventsThatAreNotKeptByAnInlineReceptionistAreReleasedOutsideTheLock() throws {
        try #require(LockDiagnostics.isTracking, "the suite runs in a debug build")
        let verdicts = Recorder<String>()
        let holder = Locked<Receptionist<LockProbe?>?>(uncounted: nil)
        let receptionist = Receptionist<LockProbe?>(on: .immediate, buffering: .dropNewest(capacity: 1)) { event in
            guard event == nil, let receptionist = holder.withLock({ $0 }) else { return }
            // Sent while this drain runs: the first waits, the second finds the buffer full.
            receptionist.send(LockProbe("kept", verdicts: verdicts))
            receptionist.send(LockProbe("dropped inline", verdicts: verdicts))
        }
        holder.withLock { $0 = receptionist }
        receptionist.send(nil)
        holder.withLock { $0 = nil }
        #expect(verdicts.values.sorted() == ["dropped inline: outside", "kept: outside"])
    }
}
