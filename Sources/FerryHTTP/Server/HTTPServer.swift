import Dispatch
import Glibc
import Logging
import FerryBase

/// An HTTP/1.1 server on POSIX sockets: one epoll loop per I/O thread and a
/// bounded worker pool for handlers.
///
/// ```swift
/// let server = HTTPServer(configuration: config, responder: router, logger: logger)
/// try server.start()          // listening once it returns; see `port`
/// SignalShutdown.install(for: server)
/// server.run()                // blocks until shut down
/// ```
public final class HTTPServer: Sendable {
    private struct State {
        var shared: ServerShared?
        var loops: [LoopHandle] = []
        var port: Int = 0
        var stopped = false
    }

    private let configuration: HTTPServerConfiguration
    private let responder: any HTTPResponder
    private let logger: Logger
    private let state = Locked(State())
    /// Entered once per running loop thread.
    private let running = DispatchGroup()

    /// A server that is not yet listening; call `start()` or `run()`.
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
    }

    /// Binds, listens and starts the threads; returns once connections are accepted.
    /// Throws on a bind or listen failure (e.g. the port is taken). Calling it twice does nothing.
    public func start() throws {
        try state.withLock { state in
            guard state.shared == nil else { return }
            signal(SIGPIPE, SIG_IGN)
            let (fd, port) = try Socket.listen(
                host: configuration.host, port: configuration.port, backlog: configuration.backlog)
            let shared = ServerShared(configuration: configuration, responder: responder, logger: logger, listenerFD: fd)
            var loops: [LoopHandle] = []
            for index in 0..<configuration.ioThreads {
                let handle = try LoopHandle(index: index)
                let loop = try EventLoop(shared: shared, handle: handle)
                loops.append(handle)
                running.enter()
                ThreadSpawn.start(name: "\(configuration.threadNamePrefix)-io-\(index)") { [running] in
                    loop.run()
                    running.leave()
                }
            }
            state.shared = shared
            state.loops = loops
            state.port = port
            logger.info("listening on \(configuration.host):\(port) with \(configuration.ioThreads) I/O and \(configuration.workerThreads) worker threads")
        }
    }

    /// The bound port, once started (useful with port 0).
    public var port: Int { state.withLock { $0.port } }

    /// Open client connections right now.
    public var openConnections: Int {
        state.withLock { $0.shared }?.openConnections.load(ordering: .relaxed) ?? 0
    }

    /// Requests whose handler is running right now.
    public var inFlightRequests: Int {
        state.withLock { $0.shared }?.inFlightRequests.load(ordering: .relaxed) ?? 0
    }

    /// Stops accepting, lets in-flight requests finish (answered with
    /// `Connection: close`) for at most `limits.shutdownGraceSeconds`, closes
    /// idle connections; `run()` then returns. Safe from any thread, repeatedly.
    public func beginShutdown() {
        let (shared, loops) = state.withLock { ($0.shared, $0.loops) }
        guard let shared, !shared.shuttingDown.exchange(true, ordering: .relaxed) else { return }
        logger.info("shutting down: finishing in-flight requests")
        for loop in loops { loop.post(.shutdown) }
    }

    /// Starts if needed and blocks until the server has shut down.
    public func run() throws {
        try start()
        waitUntilStopped()
    }

    /// Blocks until every loop has ended, then releases the listener and the workers.
    public func waitUntilStopped() {
        running.wait()
        let shared: ServerShared? = state.withLock { state in
            guard !state.stopped else { return nil }
            state.stopped = true
            return state.shared
        }
        guard let shared else { return }
        shared.workers.stop()
        close(shared.listenerFD)
        shared.descriptors.close()
        logger.info("stopped")
    }

    /// `beginShutdown()` and wait until stopped.
    public func shutdown() {
        beginShutdown()
        waitUntilStopped()
    }
}
