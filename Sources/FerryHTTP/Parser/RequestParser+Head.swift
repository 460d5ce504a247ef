/// The request line and header section.
extension RequestParser {
    /// Consumes head lines as they complete; true once the empty line ending the head is read.
    mutating func readHead(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        while request == nil {
            guard try readRequestLine(p) else { return false }
        }
        return try readFieldLines(p, trailers: false)
    }

    /// Reads one line before the headers: an ignorable empty line or the request line.
    private mutating func readRequestLine(_ p: UnsafeBufferPointer<UInt8>) throws(HTTPError) -> Bool {
        switch try scanLine(p, limit: limits.maxRequestLineBytes + 2) {
        case .needMore:
            return false
        case .tooLong:
            throw .uriTooLong(limit: limits.maxRequestLineBytes)
        case .line(let content, let next):
            consume(upTo: next)
            if content.isEmpty {
                leadingEmptyLines += 1
                if leadingEmptyLines > Self.maxLeadingEmptyLines {
                    throw .badRequest("Too many empty lines before the request line.")
                }
                return true
            }
            let line = try RequestLine.parse(bytes(p, content))
            request = HTTPRequest(
                method: line.method, target: line.target.raw, path: line.target.path,
                rawQuery: line.target.rawQuery, query: line.target.query, version: line.version)
            // Requests carry a handful of fields: one allocation instead of growing 1, 2, 4, 8.
            request?.headers.reserveCapacity(8)
            return true
        }
    }

    /// Reads header (or trailer) field lines up to the empty line; true when it is reached.
    ///
    /// Both sections share one byte budget and one field count, so trailers cannot
    /// be used to get around the header limits.
    mutating func readFieldLines(_ p: UnsafeBufferPointer<UInt8>, trailers: Bool) throws(HTTPError) -> Bool {
        while true {
            let allowance = limits.maxHeaderBytes - headerBytes
            // The final empty line is not counted, so it always fits.
            switch try scanLine(p, limit: max(allowance, 2)) {
            case .needMore:
                return false
            case .tooLong:
                throw .headersTooLarge("The header section exceeds \(limits.maxHeaderBytes) bytes.")
            case .line(let content, let next):
                consume(upTo: next)
                if content.isEmpty { return true }
                headerBytes += content.count + 2
                if headerBytes > limits.maxHeaderBytes {
                    throw .headersTooLarge("The header section exceeds \(limits.maxHeaderBytes) bytes.")
                }
                fieldCount += 1
                if fieldCount > limits.maxHeaderCount {
                    throw .headersTooLarge("More than \(limits.maxHeaderCount) header fields.")
                }
                let field = try FieldLine.parse(bytes(p, content))
                if trailers, Self.isForbiddenTrailer(field.name) { continue }
                request?.headers.add(field.name, field.value)
            }
        }
    }
}
