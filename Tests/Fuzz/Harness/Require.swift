/// A promise of a target's: when it breaks, the message goes to standard error (an optimised build drops a failed
/// precondition's message) and the process traps, for libFuzzer to keep the input.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError(message()) }
}
