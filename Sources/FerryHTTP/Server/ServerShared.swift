import CEpoll
import Glibc
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
    /// A spare descriptor, given up to accept-and-close one connection when
    /// the process runs out of descriptors (EMFILE), so that the listener
    /// does not spin and existing connections keep being served.
    private let reserveFD: Mutex<Int32>

    init(configuration: HTTPServerConfiguration, responder: any HTTPResponder, logger: Logger, listenerFD: Int32) {
        self.configuration = configuration
        self.responder = responder
        self.logger = logger
        self.listenerFD = listenerFD
        self.workers = WorkerPool(threads: configuration.workerThreads)
        self.reserveFD = Mutex(open("/dev/null", O_RDONLY | O_CLOEXEC))
    }

    /// Out of descriptors: drop one pending connection using the reserve.
    func shedPendingConnection() {
        reserveFD.withLock { reserve in
            if reserve >= 0 { close(reserve) }
            let fd = accept4(listenerFD, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 { close(fd) }
            reserve = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
    }

    func closeReserve() {
        reserveFD.withLock { reserve in
            if reserve >= 0 { close(reserve) }
            reserve = -1
        }
    }
}
