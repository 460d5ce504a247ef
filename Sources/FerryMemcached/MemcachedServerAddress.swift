/// One `"host:port"` entry of `MemcachedConfiguration.servers`.
struct MemcachedServerAddress: Sendable, Equatable {
    let host: String
    let port: UInt16

    /// Parses `"host:port"`, `"[v6]:port"`; a missing port means 11211.
    init(parsing text: String) throws(MemcachedError) {
        func bad(_ why: String) -> MemcachedError {
            MemcachedError(kind: .invalidArgument, message: "server \"\(text)\": \(why)")
        }
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw bad("unclosed '['") }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { throw bad("expected ':' after ']'") }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { throw bad("IPv6 addresses must be written as [addr]:port") }
        } else {
            host = text[...]
        }
        guard !host.isEmpty else { throw bad("empty host") }
        guard !host.contains(where: { $0.isWhitespace || $0 == "," }) else {
            throw bad("host holds whitespace or ','")
        }
        var port: UInt16 = 11211
        if let portText {
            guard let parsed = UInt16(portText), parsed > 0 else { throw bad("port must be 1...65535") }
            port = parsed
        }
        self.host = String(host)
        self.port = port
    }

    /// `"host:port"` as it appears in messages.
    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
