// The server as its users see it and what it shares among its threads:
// `HTTPServer` (start, run, shutdown), its `HTTPServerConfiguration`, the
// `HTTPResponder` protocol it serves through (with `ClosureResponder`),
// `ServerShared` (what every loop reads), `ThreadSpawn` (the named POSIX
// threads) and `SignalShutdown` (SIGTERM/SIGINT/SIGHUP). Everything here runs
// at start-up and shutdown, not per request.

import CEpoll
import Dispatch
import FerryBase
import Glibc
import Logging
import Synchronization

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
            logger.info(
                "listening on \(configuration.host):\(port) with \(configuration.ioThreads) I/O and \(configuration.workerThreads) worker threads")
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
        // Stop listening now, not when the drain ends: the kernel would otherwise go on
        // completing handshakes into the backlog, and those clients would wait out the
        // grace period and then be reset. Refused at once, a balancer tries another
        // instance. shutdown, not close: the descriptor's number stays taken until the
        // loops have dropped it from their epoll sets (waitUntilStopped closes it).
        Glibc.shutdown(shared.listenerFD, Int32(SHUT_RDWR))
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

/// Where and how an `HTTPServer` listens and how many threads it uses.
public struct HTTPServerConfiguration: Sendable {
    /// The address to bind: `127.0.0.1`, `0.0.0.0`, `::` (IPv6 and IPv4), `::1` or `localhost`.
    public var host: String
    /// The TCP port; 0 picks a free one (read it from `HTTPServer.port`).
    public var port: Int
    public var limits: HTTPLimits
    /// Event-loop threads doing socket I/O, parsing and serialization; default: one per core.
    public var ioThreads: Int
    /// Threads running handlers that may block (database calls); at most this many run at once.
    public var workerThreads: Int
    /// The listen(2) backlog.
    public var backlog: Int32
    /// Whether to write one access-log line per request at `.info`.
    public var accessLog: Bool
    /// Response compression; coded request bodies are decoded regardless.
    public var compression: HTTPCompression
    /// The `Server` field of every response; none when nil.
    public var serverName: String?
    /// The prefix of the server's thread names (`<prefix>-io-0`, `<prefix>-worker-0`),
    /// as `top` and `perf` show them; at most 8 bytes survive Linux's 15-byte limit.
    public var threadNamePrefix: String
    /// How a refusal the server itself makes (malformed request, timeout,
    /// connection cap) becomes a response.
    public var refusal: HTTPRefusal
    /// Which requests the workers serve first (``WorkerPool``); nil: all in
    /// arrival order. Called on the I/O thread for every request while jobs
    /// wait: it must be cheap and never block. What it works out on the way
    /// may go in ``HTTPRequest/learned`` for the handler.
    public var urgent: (@Sendable (inout HTTPRequest) -> Bool)?

    /// A configuration; the defaults suit production on a small machine.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, limits: HTTPLimits = HTTPLimits(),
        ioThreads: Int = HTTPServerConfiguration.coreCount, workerThreads: Int = HTTPServerConfiguration.defaultWorkerThreads,
        backlog: Int32 = 1024, accessLog: Bool = true, compression: HTTPCompression = HTTPCompression(),
        serverName: String? = nil, threadNamePrefix: String = "http",
        refusal: @escaping HTTPRefusal = { HTTPResponse.problem($0) }
    ) {
        self.host = host
        self.port = port
        self.limits = limits
        self.ioThreads = max(1, ioThreads)
        self.workerThreads = max(1, workerThreads)
        self.backlog = backlog
        self.accessLog = accessLog
        self.compression = compression
        self.serverName = serverName
        self.threadNamePrefix = threadNamePrefix
        self.refusal = refusal
    }

    /// Handler threads unless said otherwise: enough for a pool of 16 database
    /// connections with handlers waiting on other work besides.
    public static let defaultWorkerThreads = 32

    /// Online processors (`_SC_NPROCESSORS_ONLN`), at least 1.
    public static var coreCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}

/// Answers requests; the seam between the server and whatever serves.
public protocol HTTPResponder: Sendable {
    /// Called on a worker thread, never on an I/O thread: it may block (libpq calls happen here).
    /// When `runsInline` says true for this request it is called on the I/O thread instead.
    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse

    /// Whether this request may be answered directly on the I/O thread.
    /// Only for handlers that never block and finish in microseconds
    /// (e.g. `/healthz`); it saves two thread hand-offs. Default: false.
    func runsInline(_ request: HTTPRequest) -> Bool
}

extension HTTPResponder {
    /// Handlers run on the worker pool unless they say otherwise.
    public func runsInline(_ request: HTTPRequest) -> Bool { false }
}

/// An `HTTPResponder` made from a closure.
public struct ClosureResponder: HTTPResponder {
    private let body: @Sendable (HTTPRequest, RequestContext) -> HTTPResponse
    private let inline: Bool

    /// A responder calling `body` for every request; `inline` as in `runsInline`.
    public init(inline: Bool = false, _ body: @escaping @Sendable (HTTPRequest, RequestContext) -> HTTPResponse) {
        self.body = body
        self.inline = inline
    }

    public func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        body(request, context)
    }

    public func runsInline(_ request: HTTPRequest) -> Bool { inline }
}

/// Turns SIGTERM and SIGINT into a graceful `HTTPServer.beginShutdown()`,
/// and optionally SIGHUP into a reload. A second stop signal while shutting
/// down exits at once.
public enum SignalShutdown {
    /// Sources must outlive the call: a released source is cancelled.
    private static let installed = Locked<[SourceBox]>([])

    /// Installs the handlers for the life of the process. `onHangup`, when
    /// given, runs on each SIGHUP (on a Dispatch queue, not a signal handler).
    public static func install(
        for server: HTTPServer, signals: [Int32] = [SIGTERM, SIGINT], onHangup: (@Sendable () -> Void)? = nil
    ) {
        var sources = signals.map { number in
            // The default action would kill the process before the source sees it.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let seen = SignalCount()
            source.setEventHandler {
                if seen.increment() > 1 { _exit(128 + number) }
                server.beginShutdown()
            }
            source.resume()
            return SourceBox(source)
        }
        if let onHangup {
            signal(SIGHUP, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
            source.setEventHandler(handler: onHangup)
            source.resume()
            sources.append(SourceBox(source))
        }
        installed.withLock { [sources] in $0.append(contentsOf: sources) }
    }
}

/// What every I/O loop of one server shares; all of it is thread-safe.
final class ServerShared: Sendable {
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let logger: Logger
    let listenerFD: Int32
    let workers: WorkerPool
    let openConnections = Atomic<Int>(0)
    let inFlightRequests = Atomic<Int>(0)
    let shuttingDown = Atomic<Bool>(false)
    /// The spare descriptor for refusing connections when the process runs out (EMFILE).
    let descriptors = DescriptorReserve()
    /// The `Server` field line, CRLF first, written into every response head; empty for none.
    let serverField: [UInt8]

    init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger, listenerFD: Int32) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
        self.listenerFD = listenerFD
        self.workers = WorkerPool(threads: configuration.workerThreads, name: "\(configuration.threadNamePrefix)-worker")
        serverField = configuration.serverName.map { Array("\r\nServer: \($0)".utf8) } ?? []
    }
}

/// Starts a detached POSIX thread running `body`.
enum ThreadSpawn {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed: \(rc)")
        // Linux limits thread names to 15 bytes.
        _ = pthread_setname_np(thread, String(name.prefix(15)))
        pthread_detach(thread)
    }
}

/// How often a signal has arrived.
private final class SignalCount: Sendable {
    private let count = Atomic<Int>(0)
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}

/// Keeps a signal source alive. `@unchecked Sendable`: the reference never
/// changes after init and is only retained, never used, by the holder;
/// Dispatch sources are thread-safe objects anyway.
private final class SourceBox: @unchecked Sendable {
    let source: any DispatchSourceSignal
    init(_ source: any DispatchSourceSignal) { self.source = source }
}
