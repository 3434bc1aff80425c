import Foundation
import Testing

/// Exit tests (`#expect(processExitsWith:)`: a configuration the library rejects stops the program
/// with a message) run only when `RECEPTIONIST_EXIT_TESTS=1`, in a run of their own, one at a
/// time:
///
/// ```sh
/// RECEPTIONIST_EXIT_TESTS=1 swift test --no-parallel --filter "$(.ci/exit-tests --filter)"
/// ```
///
/// Run among the other tests, on a machine with few cores, they hung the whole run now and then:
/// Swift Testing's exit-test monitor on Linux (one thread, `waitid(P_ALL, WEXITED | WNOWAIT)` in
/// a loop) spins on a child that exited before its test registered it, taking the registry's lock
/// on every turn, and the registering tasks, starved by the busy pool, never got it (seen with 35
/// children left unreaped, the monitor at 100 % of a core). One at a time, with nothing else
/// running, each child is registered long before it exits.
///
/// `.ci/run` runs them in a step of their own, and `.ci/exit-tests --check` fails if a test that
/// uses `processExitsWith` lacks the trait.
enum ExitTestGate {
    static let isEnabled = ProcessInfo.processInfo.environment["RECEPTIONIST_EXIT_TESTS"] == "1"
}

extension Trait where Self == ConditionTrait {
    /// The test is an exit test: see ``ExitTestGate``.
    static var exitTest: Self {
        .enabled(
            if: ExitTestGate.isEnabled,
            "an exit test: run with RECEPTIONIST_EXIT_TESTS=1 swift test --no-parallel --filter \"$(.ci/exit-tests --filter)\""
        )
    }
}
