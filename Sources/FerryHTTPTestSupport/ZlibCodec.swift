import CZlib

/// gzip and deflate for tests, straight on zlib, so that what the server sends is
/// checked by a decoder that shares none of its code and what tests send is made
/// by an encoder that shares none of the server's either.
public enum ZlibCodec {
    /// Why decoding failed.
    public struct Failure: Error, CustomStringConvertible {
        /// zlib's status.
        public let description: String
    }

    /// `bytes` decoded as `coding` (`gzip` or `deflate`), every member of a gzip stream.
    public static func decode(_ bytes: [UInt8], coding: String = "gzip") throws -> [UInt8] {
        var stream = z_stream()
        guard czlib_inflate_init(&stream, coding == "gzip" ? 31 : 15) == Z_OK else { throw Failure(description: "inflateInit2") }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = bytes
        try input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                output += chunk[0..<(chunk.count - Int(stream.avail_out))]
                if status == Z_STREAM_END {
                    if stream.avail_in == 0 { return }
                    inflateReset(&stream)
                } else if status != Z_OK {
                    throw Failure(description: "inflate: \(status)")
                }
            }
        }
        return output
    }

    /// `bytes` encoded as one gzip (or deflate) stream.
    public static func encode(_ bytes: [UInt8], coding: String = "gzip", level: Int32 = 6) -> [UInt8] {
        var output: [UInt8] = []
        encode(coding: coding, level: level, pieces: 1, piece: { _ in bytes }, into: { output += $0 })
        return output
    }

    /// A gzip stream of `count` zero bytes, made a megabyte at a time, so neither side of
    /// the test holds the plain body.
    public static func zeros(count: Int) -> [UInt8] {
        let megabyte = [UInt8](repeating: 0, count: 1 << 20)
        var output: [UInt8] = []
        let pieces = (count + megabyte.count - 1) / megabyte.count
        encode(
            coding: "gzip", level: 9, pieces: pieces,
            piece: { index in
                index == pieces - 1 && count % megabyte.count != 0 ? Array(megabyte[0..<(count % megabyte.count)]) : megabyte
            }, into: { output += $0 })
        return output
    }

    private static func encode(
        coding: String, level: Int32, pieces: Int, piece: (Int) -> [UInt8], into emit: ([UInt8]) -> Void
    ) {
        var stream = z_stream()
        precondition(czlib_deflate_init(&stream, level, coding == "gzip" ? 31 : 15) == Z_OK)
        defer { deflateEnd(&stream) }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        for index in 0..<pieces {
            var input = piece(index)
            let mode = index == pieces - 1 ? Z_FINISH : Z_NO_FLUSH
            input.withUnsafeMutableBufferPointer { source in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                repeat {
                    let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                        stream.next_out = out.baseAddress
                        stream.avail_out = uInt(out.count)
                        return deflate(&stream, mode)
                    }
                    emit(Array(chunk[0..<(chunk.count - Int(stream.avail_out))]))
                    if status == Z_STREAM_END { return }
                } while stream.avail_out == 0 || stream.avail_in > 0
            }
        }
    }
}
