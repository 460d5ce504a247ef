import Foundation

/// A shell command that prints a bearer token from the app's identity
/// provider (a JWT), such as `gcloud auth print-identity-token` or a script
/// around the provider's CLI: how ferry-notes signs in without a Ferry
/// password. It runs at start and again whenever the server refuses the token,
/// so an expired JWT is replaced by a fresh one. The token is never printed.
struct TokenCommand: Sendable {
    let command: String

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// The command's standard output, trimmed; an error naming the command when it fails or prints nothing.
    func token() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(description: "the token command `\(command)` exited with \(process.terminationStatus)")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, !token.contains(where: \.isWhitespace) else {
            throw Failed(description: "the token command `\(command)` printed no single token")
        }
        return token
    }
}
