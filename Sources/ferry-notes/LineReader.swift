import Foundation

/// Standard input as an asynchronous stream of lines.
///
/// `readLine()` blocks its thread until a line arrives. On the cooperative
/// pool (a thread or two per core) that would stall sync, the event feed and
/// the live engine while the user thinks; so the blocking read gets a thread of its
/// own and hands each line over.
enum LineReader {
    static func lines() -> AsyncStream<String> {
        let (stream, sink) = AsyncStream.makeStream(of: String.self)
        let thread = Thread {
            while let line = readLine() { sink.yield(line) }
            sink.finish()
        }
        thread.name = "ferry-notes stdin"
        thread.start()
        return stream
    }
}
