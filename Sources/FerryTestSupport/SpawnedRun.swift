import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs a program to completion with `posix_spawn`, feeding it `input` and
/// collecting its standard output and error: ``FerryProcess/run(_:environment:input:in:)``'s
/// engine.
///
/// Not Foundation's `Process`, for the reason ``SpawnedProcess`` gives: its
/// `run()` now and then reads past a buffer while it walks `/proc/self/fd`,
/// and the more descriptors the test process holds the likelier it is. A full
/// run met it (a SIGSEGV in `Process.run()` under `FerryServer.user`, in the
/// simulation, which holds thousands of SQLite descriptors), and it killed
/// every test still running.
enum SpawnedRun {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `executable` with `arguments` and exactly `environment` in `directory`;
    /// returns its exit status (or, killed by a signal, 128 plus the signal) and what it printed.
    static func run(
        executable: String, arguments: [String], environment: [String: String], directory: String, input: String?
    ) throws -> (status: Int32, stdout: Data, stderr: Data) {
        _ = ignoreBrokenPipes
        // Close-on-exec: a child another test spawns meanwhile does not keep them open
        // (Swift's Glibc does not declare pipe2; children spawned here close from 3 anyway).
        var stdinPipe: [Int32] = [0, 0], stdoutPipe: [Int32] = [0, 0], stderrPipe: [Int32] = [0, 0]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw Failure(description: "pipe: \(String(cString: strerror(errno)))")
        }
        for end in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the child's copies.
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        guard let closeFrom = SpawnedProcess.addCloseFrom, closeFrom(&actions, 3) == 0 else {
            throw Failure(description: "posix_spawn_file_actions_addclosefrom_np is missing or failed")
        }
        guard let chdir = addChdir, chdir(&actions, directory) == 0 else {
            throw Failure(description: "posix_spawn_file_actions_addchdir_np is missing or failed")
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        // The child's ends are the child's now.
        for end in [stdinPipe[0], stdoutPipe[1], stderrPipe[1]] { close(end) }
        guard spawned == 0 else {
            for end in [stdinPipe[1], stdoutPipe[0], stderrPipe[0]] { close(end) }
            throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        // Both outputs are read while the input is written, so that no full pipe blocks either side.
        let stderrData = Mutex(Data())
        let stderrDone = DispatchSemaphore(value: 0)
        let stdoutData = Mutex(Data())
        let stdoutDone = DispatchSemaphore(value: 0)
        let errRead = stderrPipe[0], outRead = stdoutPipe[0]
        Thread {
            stderrData.withLock { $0 = readAll(errRead) }
            stderrDone.signal()
        }.start()
        Thread {
            stdoutData.withLock { $0 = readAll(outRead) }
            stdoutDone.signal()
        }.start()
        if let input {
            var bytes = Array(input.utf8)[...]
            while !bytes.isEmpty {
                let written = bytes.withUnsafeBytes { write(stdinPipe[1], $0.baseAddress, $0.count) }
                if written < 0 {
                    if errno == EINTR { continue }
                    break  // The child stopped reading (it exited): what it printed says why.
                }
                bytes = bytes.dropFirst(written)
            }
        }
        close(stdinPipe[1])
        stdoutDone.wait()
        stderrDone.wait()
        close(errRead)
        close(outRead)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        let signal = status & 0x7f
        let code = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return (code, stdoutData.withLock { $0 }, stderrData.withLock { $0 })
    }

    /// A child that exits before reading all of its input must not kill the test
    /// process with SIGPIPE: the write fails with EPIPE instead.
    private static let ignoreBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Everything readable from `descriptor` until its end.
    private static func readAll(_ descriptor: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29), looked up in the loaded glibc.
    private static let addChdir: AddChdir? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(symbol, to: AddChdir.self)
    }()
}
