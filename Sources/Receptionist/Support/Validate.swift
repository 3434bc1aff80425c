/// Stops the program with a message naming the operator and parameter, for a configuration
/// that cannot work.
@usableFromInline
func validate(_ condition: Bool, _ message: @autoclosure () -> String) {
    precondition(condition, "Receptionist: " + message())
}
