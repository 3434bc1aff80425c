import Dispatch
import Foundation
import Testing

@testable import Receptionist

/// An event whose deinit checks whether the receptionist's lock is held: it asks for the
/// statistics (which take that lock) from another thread and waits a little. Run under the lock,
/// the other thread cannot get in before the deinit gives up.
private final class LockProbe: Sendable {
    let name: String
    let verdicts: Recorder<String>
    let touchLock: @Sendable () -> Void

    init(_ name: String, verdicts: Recorder<String>, touchLock: @escaping @Sendable () -> Void) {
        self.name = name
        self.verdicts = verdicts
        self.touchLock = touchLock
    }

    deinit {
        let done = DispatchSemaphore(value: 0)
        let touchLock = self.touchLock
        Thread {
            touchLock()
            done.signal()
        }.start()
        // A generous bound: the lock is taken for nanoseconds unless this deinit runs under it.
        let outside = done.wait(timeout: .now() + 2) == .success
        verdicts.append("\(name): \(outside ? "outside" : "under the lock")")
    }
}

/// Events a receptionist does not keep (dropped, rejected, evicted) are released after its lock
/// is released: their deinit is user code.
@Suite struct ReceptionistReleaseTests {
    @Test func eventsThatAreNotKeptAreReleasedOutsideTheLock() {
        let verdicts = Recorder<String>()
        let target = ManualTarget()
        let newest = Receptionist<LockProbe?>(on: target, buffering: .dropNewest(capacity: 1)) { _ in }
        let oldest = Receptionist<LockProbe?>(on: target, buffering: .dropOldest(capacity: 1)) { _ in }
        func probe(_ name: String, _ receptionist: Receptionist<LockProbe?>) -> LockProbe {
            LockProbe(name, verdicts: verdicts) { [weak receptionist] in _ = receptionist?.statistics }
        }
        newest.send(nil)
        newest.send(probe("dropped by dropNewest", newest))
        oldest.send(probe("evicted by dropOldest", oldest))
        oldest.send(nil)
        newest.cancel()
        newest.send(probe("rejected after cancel", newest))
        target.runAll()
        #expect(
            verdicts.values.sorted() == [
                "dropped by dropNewest: outside", "evicted by dropOldest: outside", "rejected after cancel: outside",
            ])
    }

    @Test func eventsThatAreNotKeptByAnInlineReceptionistAreReleasedOutsideTheLock() {
        let verdicts = Recorder<String>()
        let holder = Locked<Receptionist<LockProbe?>?>(uncounted: nil)
        let receptionist = Receptionist<LockProbe?>(on: .immediate, buffering: .dropNewest(capacity: 1)) { event in
            guard event == nil, let receptionist = holder.withLock({ $0 }) else { return }
            // Sent while this drain runs: the first waits, the second finds the buffer full.
            receptionist.send(LockProbe("kept", verdicts: verdicts) { _ = receptionist.statistics })
            receptionist.send(LockProbe("dropped inline", verdicts: verdicts) { _ = receptionist.statistics })
        }
        holder.withLock { $0 = receptionist }
        receptionist.send(nil)
        holder.withLock { $0 = nil }
        #expect(verdicts.values.sorted() == ["dropped inline: outside", "kept: outside"])
    }
}
