/// The password a command reads from standard input: one line, never an
/// argument, which `ps` and the shell's history would show.
enum PasswordInput {
    /// The first line of standard input, without its newline; an empty or missing line is refused.
    static func read() throws -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw CLIError("no password on standard input")
        }
        return line
    }
}
