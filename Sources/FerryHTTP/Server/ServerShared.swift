import Logging
import Synchronization

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
