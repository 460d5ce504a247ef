import FerryHTTP

// Compact JSON: the byte-level compaction of PostgreSQL's spaced JSON, and the
// middleware that applies it to every in-memory JSON answer.

/// JSON text without the whitespace between tokens.
///
/// PostgreSQL builds Ferry's JSON, and its json_build_object and json_agg put
/// `" : "` and `", "` between members (jsonb's text form `": "`); no built-in
/// JSON function of PostgreSQL 15 writes compact text except row_to_json,
/// which would need a subquery per row. Stripping the spacing on the way out
/// is one pass over bytes that are copied anyway, and makes an Index page
/// noticeably smaller before compression (see bench/api/README.md).
enum CompactJSON {
    /// `json` without insignificant whitespace, or nil when it has none (most
    /// bodies Swift wrote itself), so that those are not copied.
    ///
    /// Only whitespace outside strings goes; text that is not valid JSON keeps
    /// its meaning as far as it had one.
    static func compacted(_ json: [UInt8]) -> [UInt8]? {
        json.withUnsafeBufferPointer { input -> [UInt8]? in
            let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
            var inString = false
            var index = 0
            var output: [UInt8]? = nil
            // Bytes from runStart up to index are kept, and copied once the run ends.
            var runStart = 0
            while index < input.count {
                let byte = input[index]
                if inString {
                    if byte == backslash {
                        index += 2
                        continue
                    }
                    if byte == quote { inString = false }
                } else if byte == quote {
                    inString = true
                } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                    if output == nil {
                        output = []
                        output!.reserveCapacity(input.count)
                    }
                    output!.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<index]))
                    runStart = index + 1
                }
                index += 1
            }
            guard var output else { return nil }
            if runStart < input.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart...])) }
            return output
        }
    }
}

/// Makes every in-memory JSON and problem+json answer compact (``CompactJSON``),
/// whichever route, hook or replay produced it.
struct CompactJSONResponder: Middleware {
    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        var response = try next(request, context)
        guard case .bytes(let body) = response.body, !body.isEmpty, let type = response.headers["Content-Type"],
            type.hasPrefix("application/json") || type.hasPrefix("application/problem+json"),
            let compact = CompactJSON.compacted(body)
        else { return response }
        response.body = .bytes(compact)
        return response
    }
}
