import Dispatch
import Glibc

/// Turns SIGTERM and SIGINT into a graceful `HTTPServer.beginShutdown()`.
/// A second signal while shutting down exits at once.
public enum SignalShutdown {
    /// Installs the handlers; keep the returned sources alive as long as they should work.
    @discardableResult
    public static func install(for server: HTTPServer, signals: [Int32] = [SIGTERM, SIGINT]) -> [any DispatchSourceSignal] {
        signals.map { number in
            // The default action would kill the process before the source sees it.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let seen = SignalCount()
            source.setEventHandler {
                if seen.increment() > 1 { _exit(128 + number) }
                server.beginShutdown()
            }
            source.resume()
            return source
        }
    }
}

import Synchronization

/// How often a signal has arrived.
private final class SignalCount: Sendable {
    private let count = Atomic<Int>(0)
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}
