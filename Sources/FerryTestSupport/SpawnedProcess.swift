import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for ``FerryServeProcess``.
///
/// Not Foundation's `Process`: on Linux its `run()` copies each entry of
/// `/proc/self/fd` 256 bytes at a time and now and then reads past glibc's
/// buffer into an unmapped page, a SIGSEGV that kills the whole test run
/// (swift-corelibs-foundation pull request 5472, not in this toolchain). How
/// often depends on how many descriptors the test process holds; the
/// simulation's server restarts met it on some seeds.
final class SpawnedProcess {
    let processIdentifier: pid_t
    private var exited = false

    /// Starts `executable` with `arguments` and exactly `environment`, its
    /// standard output and error appended to `outputPath`, its standard input
    /// `/dev/null`, and no other descriptor of this process.
    init(executable: String, arguments: [String], environment: [String: String], outputPath: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The test process's sockets and files stay its own, as Process closes them
        // (glibc 2.34's closefrom action; Swift's Glibc module does not declare it).
        guard let closeFrom = Self.addCloseFrom else { throw TestError("glibc has no posix_spawn_file_actions_addclosefrom_np") }
        guard closeFrom(&actions, 3) == 0 else { throw TestError("posix_spawn_file_actions_addclosefrom_np failed") }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard status == 0 else { throw TestError("posix_spawn \(executable): \(String(cString: strerror(status)))") }
        processIdentifier = pid
    }

    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// `posix_spawn_file_actions_addclosefrom_np`, looked up in the loaded glibc.
    static let addCloseFrom: AddCloseFrom? = {
        // RTLD_DEFAULT is the null handle on glibc.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// Whether it has not exited yet (reaping it once it has).
    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        let result = waitpid(processIdentifier, &status, WNOHANG)
        if result == processIdentifier || (result == -1 && errno == ECHILD) { exited = true }
        return !exited
    }

    /// SIGTERM.
    func terminate() { _ = Glibc.kill(processIdentifier, SIGTERM) }

    /// Waits until it has exited, and reaps it.
    func waitUntilExit() {
        guard !exited else { return }
        var status: Int32 = 0
        while waitpid(processIdentifier, &status, 0) == -1, errno == EINTR {}
        exited = true
    }
}
