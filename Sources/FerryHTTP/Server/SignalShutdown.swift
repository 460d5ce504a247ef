import Dispatch
import Glibc
import FerryBase
import Synchronization

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
