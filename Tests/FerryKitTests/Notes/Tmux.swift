import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A private tmux server, for driving a terminal app as a person would: type a
/// line, read the screen. Its own socket name, so parallel tests and anyone's
/// own tmux never meet it; `kill()` ends every session and with them the server.
final class Tmux {
    let socket = "ferry-notes-test-" + UUID().uuidString.prefix(8).lowercased()
    private var sessions: [String] = []

    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether a `tmux` is on PATH; without one the terminal tests cannot run.
    static var isInstalled: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/tmux") }
    }

    /// Starts `command` in a new detached session of `width` × `height`. A
    /// pane whose command exits stays on screen (`remain-on-exit`), so a crash
    /// is readable in the failure message instead of a vanished pane.
    func start(_ session: String, command: [String], environment: [String: String] = [:], width: Int = 200, height: Int = 60) throws {
        let quoted = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        var arguments = ["new-session", "-d", "-s", session, "-x", String(width), "-y", String(height)]
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(name)=\(value)"] }
        try run(arguments + ["exec \(quoted)", ";", "set-option", "-t", session, "remain-on-exit", "on"])
        sessions.append(session)
    }

    /// Types `line` and presses Enter (`-l`: the text goes literally, so a
    /// word like "Enter" or "C-c" inside it is not read as a key name).
    func type(_ session: String, _ line: String) throws {
        try run(["send-keys", "-t", session, "-l", line])
        try run(["send-keys", "-t", session, "Enter"])
    }

    /// What the pane shows now, line by line.
    func screen(_ session: String) throws -> String {
        try run(["capture-pane", "-p", "-t", session])
    }

    /// Ends every session (each pane's process gets SIGHUP), and the server
    /// exits with its last session. Not `kill-server`: that is a SIGTERM the
    /// server sends itself, and a server started from a test thread that
    /// blocks signals would never see it.
    func kill() {
        for session in sessions.reversed() { _ = try? run(["kill-session", "-t", session]) }
        sessions.removeAll()
        // tmux leaves its socket file behind; it is ours and of no further use.
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        try? FileManager.default.removeItem(atPath: "\(directory)/tmux-\(getuid())/\(socket)")
    }

    /// Runs one tmux command and waits for it; its standard output.
    ///
    /// By `posix_spawn`, not Foundation's `Process`: the first command starts
    /// the tmux server, a daemon that would keep whatever it was born with.
    /// `Process` learns that a child ended when descriptors it shares with the
    /// child close, so it would wait for the server (and so would any other
    /// test whose subprocess started at that moment); and the server would
    /// inherit the test thread's blocked signals. Here the child starts with no
    /// signal blocked, bash closes every descriptor above 2 before it becomes
    /// tmux, and output goes through files.
    @discardableResult
    private func run(_ arguments: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory
        let outPath = directory.appendingPathComponent("tmux-\(UUID().uuidString).out").path
        let errPath = directory.appendingPathComponent("tmux-\(UUID().uuidString).err").path
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        let closeAndRun = #"for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done 2>/dev/null; exec tmux "$@""#
        let status = try Self.spawn(["/bin/bash", "-c", closeAndRun, "tmux", "-L", socket] + arguments, stdout: outPath, stderr: errPath)
        guard status == 0 else {
            let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
            throw Failed(description: "tmux \(arguments.joined(separator: " ")) exited with \(status): \(errors)")
        }
        return (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
    }

    /// Runs `argv` with standard input from /dev/null and its output in two
    /// files, every signal unblocked; its exit status.
    private static func spawn(_ argv: [String], stdout: String, stderr: String) throws -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup($0) } + [nil]
        defer { (cArguments + cEnvironment).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        guard spawned == 0 else { throw Failed(description: "posix_spawn \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failed(description: "waitpid: \(String(cString: strerror(errno)))") }
        }
        // Exited normally: the status's second byte; killed by a signal: 128 + it, as a shell says.
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
