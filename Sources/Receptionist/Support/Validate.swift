/// Stops the program with a message naming the operator and parameter, for a configuration
/// that cannot work.
///
/// With `fatalError`, which prints its message in every build configuration: `precondition`
/// prints nothing in an optimised (`-O`) build, only "Illegal instruction"
/// (`.ci/check-release-messages` reads a release binary's standard error).
@usableFromInline
func validate(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("Receptionist: " + message()) }
}
