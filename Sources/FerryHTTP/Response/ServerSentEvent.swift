/// One event of a `text/event-stream` body (the WHATWG HTML standard,
/// "Server-sent events"), as its bytes: `id`, `event` and `data` fields and
/// the blank line that dispatches it. A line break inside `data` becomes
/// several `data` lines, which the client joins with line feeds again; an `id`
/// or `event` can hold none, so theirs are dropped.
public struct ServerSentEvent: Sendable, Equatable {
    public var id: String?
    public var event: String?
    public var data: [UInt8]

    public init(id: String? = nil, event: String? = nil, data: [UInt8]) {
        self.id = id
        self.event = event
        self.data = data
    }

    /// `retry: <ms>`: how long a client waits before it reconnects.
    public static func retry(milliseconds: Int) -> [UInt8] { Array("retry: \(milliseconds)\n\n".utf8) }

    /// A comment line, which clients ignore: a heartbeat.
    public static let comment: [UInt8] = Array(":\n\n".utf8)

    /// The event's bytes on the wire.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + 64)
        if let id { Self.field("id", Self.oneLine(id), into: &out) }
        if let event { Self.field("event", Self.oneLine(event), into: &out) }
        var start = data.startIndex
        while true {
            let end = data[start...].firstIndex { $0 == 10 || $0 == 13 } ?? data.endIndex
            Self.field("data", data[start..<end], into: &out)
            guard end < data.endIndex else { break }
            // CRLF is one line break.
            start = data[end] == 13 && end + 1 < data.endIndex && data[end + 1] == 10 ? end + 2 : end + 1
        }
        out.append(10)
        return out
    }

    private static func oneLine(_ text: String) -> [UInt8] {
        text.utf8.filter { $0 != 10 && $0 != 13 && $0 != 0 }
    }

    private static func field(_ name: String, _ value: some Collection<UInt8>, into out: inout [UInt8]) {
        out.append(contentsOf: name.utf8)
        out.append(contentsOf: [58, 32])
        out.append(contentsOf: value)
        out.append(10)
    }
}
