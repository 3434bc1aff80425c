@testable import Receptionist

/// A value whose deinit records how many of the library's locks its thread held when it was
/// released: "outside" (0) is what every release path must show. Its deinit stands for user
/// code, which the library must never run under its locks.
///
/// Relies on ``LockDiagnostics``, which counts in debug builds only (the test suite is one).
final class ReleaseProbe: Sendable {
    let name: String
    let log: Recorder<String>

    init(_ name: String, log: Recorder<String>) {
        self.name = name
        self.log = log
    }

    deinit {
        let held = LockDiagnostics.locksHeldByCurrentThread
        log.append("\(name): \(held == 0 ? "outside" : "under \(held) lock(s)")")
    }
}
