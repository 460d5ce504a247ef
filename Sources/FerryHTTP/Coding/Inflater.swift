import CZlib

/// Decodes a gzip or deflate request body, refusing to produce more than a limit.
enum Inflater {
    enum Failure: Error, Equatable {
        /// The decoded body would exceed the limit.
        case tooLarge
        /// Not a valid stream of the coding, or cut short.
        case corrupt
    }

    /// `input` decoded, at most `limit` bytes of it.
    ///
    /// The output grows as inflation proceeds and inflation stops at `limit + 1` bytes, so a
    /// small body that expands enormously (a "gzip bomb") costs at most `limit` bytes of memory
    /// and the time to inflate them. Concatenated gzip members decode as one body (RFC 1952 §2.2).
    static func inflate(_ input: [UInt8], coding: ContentCoding, limit: Int) throws(Failure) -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        guard czlib_inflate_init(stream, coding.windowBits) == Z_OK else { throw .corrupt }
        var output: [UInt8] = []
        output.reserveCapacity(min(limit + 1, max(64 * 1024, input.count * 4)))
        var scratch = [UInt8](repeating: 0, count: 64 * 1024)
        let result: Failure? = input.withUnsafeBufferPointer { source in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
            stream.pointee.avail_in = uInt(source.count)
            while true {
                // Never ask for more than one byte past the limit.
                let room = min(scratch.count, limit + 1 - output.count)
                let (produced, status) = scratch.withUnsafeMutableBufferPointer { out -> (Int, Int32) in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = uInt(room)
                    let status = zlibInflate(stream, Z_NO_FLUSH)
                    return (room - Int(stream.pointee.avail_out), status)
                }
                if produced > 0 {
                    // Grow by doubling, but never past the limit, so capacity stays within it.
                    if output.count + produced > output.capacity {
                        output.reserveCapacity(min(limit + 1, max(output.count + produced, output.capacity * 2)))
                    }
                    output.append(contentsOf: scratch[0..<produced])
                }
                if output.count > limit { return .tooLarge }
                switch status {
                case Z_STREAM_END:
                    guard stream.pointee.avail_in > 0 else { return nil }
                    // Another gzip member follows; deflate has no members, so more bytes are garbage.
                    guard coding == .gzip, inflateReset(stream) == Z_OK else { return .corrupt }
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    // No progress: with input left the output was full (loop again); without, it is cut short.
                    if stream.pointee.avail_in == 0 { return .corrupt }
                default:
                    return .corrupt
                }
            }
        }
        if let result { throw result }
        return output
    }
}

/// zlib's `inflate`, named apart from ``Inflater/inflate(_:coding:limit:)``.
private func zlibInflate(_ stream: z_streamp, _ flush: Int32) -> Int32 { CZlib.inflate(stream, flush) }
