/// Stops the program with a message naming the operator and parameter, for a configuration
/// that cannot work.
///
/// With `fatalError`, which prints its message in every build configuration: `precondition`
/// prints nothing in an optimised (`-O`) build, only "Illegal instruction"
/// (`.ci/check-release-messages` reads a release binary's standard error).
@usableFromInline
func validate(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { invalidConfiguration(message()) }
}

/// Stops the program with `message`, prefixed "Receptionist: ", in every build configuration.
///
/// Out of line, so that a caller's fast path keeps its size (`fatalError` inlined with its
/// message would make a transaction's key-path lookup longer).
@usableFromInline
@inline(never)
func invalidConfiguration(_ message: String) -> Never {
    fatalError("Receptionist: " + message)
}
