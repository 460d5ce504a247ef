/// A command failure: the message goes to standard error and the exit status is 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
