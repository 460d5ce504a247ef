import FerryHTTPTestSupport
import FerryPostgres
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests that must stop or restart the server.
///
/// Lives in a fresh temporary directory (data, log and unix socket), listens on a random
/// free port on 127.0.0.1 with trust authentication for the `postgres` superuser, and is
/// created with the binaries in `FERRY_TEST_PG_BIN`. When the tests run as root, every
/// server command goes through `runuser -u postgres --`, because PostgreSQL refuses to run
/// as root. Call `destroy()` (typically in `defer`) to stop it and delete the directory.
///
/// With `diskMegabytes` (root only), the data directory lives on a tmpfs of that size
/// mounted at `disk`, so a test can fill the disk under PostgreSQL and free it again.
public final class TemporaryPostgres: Sendable {
    /// Failure of a server command, with the tail of its output.
    public struct CommandFailed: Error, CustomStringConvertible {
        let command: String
        let output: String
        public var description: String { "\(command) failed:\n\(output)" }
    }

    /// The cluster's directory (data, log, socket).
    public let directory: String
    /// The TCP port on 127.0.0.1.
    public let port: Int
    private let bin: String
    /// The tmpfs mount point when the cluster was made with `diskMegabytes`, else nil.
    public let disk: String?
    private var dataDirectory: String { (disk ?? directory) + "/data" }
    private let runAsPostgres = getuid() == 0

    /// Whether this process may put a cluster on its own tmpfs: it runs as root
    /// and a trial mount works (a container may refuse mounts even to root).
    public static let canMountDisk: Bool = {
        guard getuid() == 0 else { return false }
        var template = Array("/tmp/ferry-mount-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return false }
        let point = String(cString: made)
        defer { rmdir(point) }
        func succeeds(_ tool: String, _ arguments: [String]) -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        guard succeeds("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", point]) else { return false }
        return succeeds("/usr/bin/umount", [point])
    }()

    /// A libpq URL for the superuser's `postgres` database.
    public var url: String { "postgresql://postgres@127.0.0.1:\(port)/postgres" }

    /// Creates, initialises and starts a cluster; `diskMegabytes` puts its data on a tmpfs that small.
    public init(diskMegabytes: Int? = nil) throws {
        bin = try TestEnvironment.postgresBin()
        var template = Array("/tmp/ferry-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CommandFailed(command: "mkdtemp", output: String(cString: strerror(errno))) }
        let directory = String(cString: made)
        self.directory = directory
        port = try Self.freePort()
        disk = diskMegabytes == nil ? nil : directory + "/disk"
        do {
            if runAsPostgres {
                guard let user = getpwnam("postgres") else {
                    throw CommandFailed(command: "getpwnam(postgres)", output: "running as root but there is no postgres user")
                }
                chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
                if let disk, let megabytes = diskMegabytes {
                    mkdir(disk, 0o700)
                    let options = "size=\(megabytes)m,mode=0700,uid=\(user.pointee.pw_uid),gid=\(user.pointee.pw_gid)"
                    try spawn(["/usr/bin/mount", "-t", "tmpfs", "-o", options, "tmpfs", disk], output: directory + "/mount.out")
                }
            } else if diskMegabytes != nil {
                throw CommandFailed(command: "mount -t tmpfs", output: "a cluster on its own tmpfs needs root")
            }
            try run("initdb", ["-D", dataDirectory, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
            try start()
        } catch {
            destroy()
            throw error
        }
    }

    /// Starts the server and waits until it accepts connections.
    public func start() throws {
        let options = "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=50"
        try run("pg_ctl", ["-D", dataDirectory, "-l", directory + "/server.log", "-o", options, "-w", "-t", "60", "start"])
    }

    /// Serves TLS from now on, restarts included (a self-signed certificate made with
    /// `openssl`, `ssl = on` by ALTER SYSTEM), as a production server does;
    /// `?sslmode=require` on ``url`` then uses it.
    public func enableTLS() throws {
        let key = dataDirectory + "/server.key"
        let certificate = dataDirectory + "/server.crt"
        let openssl = [
            "/usr/bin/openssl", "req", "-new", "-x509", "-days", "2", "-nodes", "-subj", "/CN=localhost", "-keyout", key, "-out", certificate,
        ]
        try spawn(runAsPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + openssl : openssl, output: directory + "/openssl.out")
        chmod(key, 0o600)
        let admin = try PostgresConnection(url: url)
        defer { admin.close() }
        try admin.execute("ALTER SYSTEM SET ssl = on")
        _ = try admin.query("SELECT pg_reload_conf()")
        // The reload reaches the postmaster a moment later.
        let serving = eventually(within: 30, every: 0.05) {
            (try? PostgresConnection(url: self.url + "?sslmode=require").close()) != nil
        }
        guard serving else { throw CommandFailed(command: "ssl = on", output: "no TLS connection within 30 s") }
    }

    /// Stops the server; `mode` is pg_ctl's shutdown mode ("smart", "fast", "immediate").
    public func stop(mode: String = "fast") throws {
        try run("pg_ctl", ["-D", dataDirectory, "-m", mode, "-w", "-t", "60", "stop"])
    }

    /// Restarts the server and waits until it accepts connections again.
    public func restart(mode: String = "fast") throws {
        try stop(mode: mode)
        try start()
    }

    /// Copies the data directory aside as `name`: a cold backup, taken while
    /// the server is stopped (``stop(mode:)``), for a test of a restore.
    public func backUp(as name: String) throws {
        try spawn(["/bin/cp", "-a", dataDirectory, directory + "/" + name], output: directory + "/backup.out")
    }

    /// Puts the backup `name` (``backUp(as:)``) in place of the data directory,
    /// the server stopped: the cluster restored to that point, its transaction
    /// ids included. The backup stays, for another restore.
    public func restore(_ name: String) throws {
        try spawn(["/bin/rm", "-rf", dataDirectory], output: directory + "/restore.out")
        try spawn(["/bin/cp", "-a", directory + "/" + name, dataDirectory], output: directory + "/restore.out")
    }

    /// Freezes the server: SIGSTOP to the postmaster and every process it started. To a
    /// client it looks like a hung host, or a partition that keeps TCP up: connections
    /// stay open and connecting still completes in the kernel, but nothing is answered.
    /// ``thaw()`` lets it run on (``destroy()`` thaws first).
    public func freeze() throws { try signalServer(SIGSTOP) }

    /// Lets a frozen server run on. Never throws.
    public func thaw() { try? signalServer(SIGCONT) }

    /// Sends `signal` to the postmaster (first, so it starts nothing new), then to each
    /// of its children, found in /proc by their parent.
    private func signalServer(_ signal: Int32) throws {
        let pidFile = (try? String(contentsOfFile: dataDirectory + "/postmaster.pid", encoding: .utf8)) ?? ""
        guard let line = pidFile.split(separator: "\n").first, let postmaster = pid_t(line) else {
            throw CommandFailed(command: "read \(dataDirectory)/postmaster.pid", output: pidFile)
        }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let nameEnd = stat.lastIndex(of: ")")
            else { continue }
            // "pid (name) state ppid …": the name may hold spaces, so read past its last ')'.
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { pids.append(pid) }
        }
        for pid in pids where kill(pid, signal) != 0 && errno != ESRCH {
            throw CommandFailed(command: "kill -\(signal) \(pid)", output: String(cString: strerror(errno)))
        }
    }

    /// Stops the server if it runs and deletes the directory. Never throws.
    public func destroy() {
        thaw()
        if FileManager.default.fileExists(atPath: dataDirectory + "/postmaster.pid") {
            try? stop(mode: "immediate")
        }
        if let disk {
            // Busy while the server's last processes exit: retry, then detach it lazily
            // rather than leave a mount behind (bench runs often did).
            let unmounted = eventually(within: 5, every: 0.1) {
                (try? spawn(["/usr/bin/umount", disk], output: directory + "/umount.out")) != nil
            }
            if !unmounted { try? spawn(["/usr/bin/umount", "-l", disk], output: directory + "/umount.out") }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs one of the PostgreSQL binaries, as the postgres user when needed.
    ///
    /// Uses posix_spawn and waitpid rather than Foundation's `Process`, whose exit
    /// monitoring hung here once `pg_ctl start` left a daemonised server behind.
    private func run(_ tool: String, _ arguments: [String]) throws {
        let toolPath = bin + "/" + tool
        let argv = runAsPostgres ? ["/usr/sbin/runuser", "-u", "postgres", "--", toolPath] + arguments : [toolPath] + arguments
        // Output goes to a file, not a pipe: the daemonised server must not hold our pipe open.
        try spawn(argv, output: directory + "/\(tool).out", describing: "\(tool) \(arguments.joined(separator: " "))")
    }

    /// Runs `argv` to completion with its output in `outputPath`; throws with that
    /// output and the server log's tail when it fails.
    private func spawn(_ argv: [String], output outputPath: String, describing: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else {
            throw CommandFailed(command: argv[0], output: String(cString: strerror(spawned)))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED && WEXITSTATUS == 0, spelled out because the C macros are not imported.
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw CommandFailed(command: describing ?? argv.joined(separator: " "), output: String((text + log).suffix(4000)))
        }
    }

    /// A TCP port on 127.0.0.1 that nothing listens on right now.
    public static func freePort() throws -> Int {
        let port = FreePort.next()
        guard port > 0 else { throw CommandFailed(command: "bind", output: String(cString: strerror(errno))) }
        return port
    }
}
