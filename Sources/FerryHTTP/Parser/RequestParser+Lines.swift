#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finding CRLF-terminated lines without rescanning bytes already seen.
extension RequestParser {
    enum LineScan {
        /// A complete line: its content without CRLF, and the index just past its LF.
        case line(content: Range<Int>, next: Int)
        case needMore
        /// No LF within the allowed length: the line is over its limit.
        case tooLong
    }

    /// Looks for the LF ending the line at `readIndex`, searching at most `limit` bytes
    /// (content plus CRLF) from the line start, and resuming where the last search stopped.
    ///
    /// A line must end in CRLF; a bare LF is refused rather than tolerated, because
    /// a front end that disagrees on line endings is a request smuggling vector.
    mutating func scanLine(_ p: UnsafeBufferPointer<UInt8>, limit: Int) throws(HTTPError) -> LineScan {
        let searchEnd = readIndex + min(limit, p.count - readIndex)
        if scanIndex < searchEnd, let base = p.baseAddress,
            let hit = memchr(base + scanIndex, Int32(ASCII.lf), searchEnd - scanIndex)
        {
            let lf = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            guard lf > readIndex, p[lf - 1] == ASCII.cr else {
                throw .badRequest("Lines must end with CRLF; a bare LF is not accepted.")
            }
            return .line(content: readIndex..<(lf - 1), next: lf + 1)
        }
        scanIndex = max(scanIndex, searchEnd)
        return p.count - readIndex >= limit ? .tooLong : .needMore
    }

    /// Marks everything before `index` as consumed.
    mutating func consume(upTo index: Int) {
        readIndex = index
        scanIndex = index
    }

    /// The bytes of a range of the buffer.
    func bytes(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: p[range])
    }
}
