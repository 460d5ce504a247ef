import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who signs in where: from flags first, then the environment, then asked on
/// the terminal, so that a script, a test and a person can each start the app
/// the way that suits them (and a password need not appear in `ps`).
struct Credentials: Sendable {
    let server: URL
    let user: String
    let password: String

    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    static func resolve(
        server: String?, user: String?, password: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Credentials {
        guard let serverText = server ?? environment["FERRY_NOTES_SERVER"] ?? ask("server URL: "),
            let url = URL(string: serverText), url.scheme != nil
        else { throw Missing(description: "no server URL: --server, FERRY_NOTES_SERVER, or type it when asked") }
        guard let name = user ?? environment["FERRY_NOTES_USER"] ?? ask("user: "), !name.isEmpty
        else { throw Missing(description: "no user: --user, FERRY_NOTES_USER, or type it when asked") }
        guard let secret = password ?? environment["FERRY_NOTES_PASSWORD"] ?? askSecret("password for \(name): ")
        else { throw Missing(description: "no password: FERRY_NOTES_PASSWORD, or type it when asked") }
        return Credentials(server: url, user: name, password: secret)
    }

    private static func ask(_ prompt: String) -> String? {
        FileHandle.standardOutput.write(Data(prompt.utf8))
        return readLine()?.trimmingCharacters(in: .whitespaces)
    }

    /// On a terminal the password is read without echo (`getpass` talks to
    /// the tty itself); from a pipe it is one plain line.
    private static func askSecret(_ prompt: String) -> String? {
        guard isatty(0) == 1 else { return readLine() }
        guard let typed = getpass(prompt) else { return nil }
        return String(cString: typed)
    }
}
