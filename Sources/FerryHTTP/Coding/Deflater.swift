import CZlib

/// A zlib deflate stream producing gzip or deflate (zlib-wrapped) output.
///
/// One thread uses an instance at a time; it is never shared.
final class Deflater {
    /// Allocated, not a stored property: zlib's state points back at its z_stream,
    /// so the struct must stay at one address for the stream's life.
    private let stream: UnsafeMutablePointer<z_stream>
    /// Where each call's output lands before it is handed on.
    private var scratch = [UInt8](repeating: 0, count: 16 * 1024)

    /// A stream at `level` (1 fastest … 9 smallest).
    init(coding: ContentCoding, level: Int) {
        precondition(coding != .identity, "identity needs no deflater")
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // Only out-of-memory or a bad level fails; levels are checked by configuration.
        let status = czlib_deflate_init(stream, Int32(min(9, max(1, level))), coding.windowBits)
        precondition(status == Z_OK, "deflateInit2 failed: \(status)")
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// The whole of `input` compressed as one stream, in one call; for in-memory bodies.
    static func compress(_ input: [UInt8], coding: ContentCoding, level: Int) -> [UInt8] {
        let deflater = Deflater(coding: coding, level: level)
        let bound = Int(deflateBound(deflater.stream, uLong(input.count)))
        return [UInt8](unsafeUninitializedCapacity: bound) { output, count in
            input.withUnsafeBufferPointer { source in
                deflater.stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                deflater.stream.pointee.avail_in = uInt(source.count)
                deflater.stream.pointee.next_out = output.baseAddress
                deflater.stream.pointee.avail_out = uInt(output.count)
                // deflateBound is an upper bound, so one Z_FINISH call completes the stream.
                let status = deflate(deflater.stream, Z_FINISH)
                precondition(status == Z_STREAM_END, "deflate into its bound did not finish: \(status)")
                count = Int(deflater.stream.pointee.total_out)
            }
        }
    }

    /// Compresses `input` and hands each piece of output to `emit`.
    ///
    /// - Parameter mode: `Z_NO_FLUSH` to let zlib gather, `Z_SYNC_FLUSH` so that everything
    ///   written so far can be decoded by the client now, `Z_FINISH` to end the stream.
    func compress(_ input: UnsafeRawBufferPointer, mode: Int32, emit: ([UInt8]) throws -> Void) rethrows {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        while true {
            let (produced, status) = scratch.withUnsafeMutableBufferPointer { out -> (Int, Int32) in
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(out.count)
                let status = deflate(stream, mode)
                return (out.count - Int(stream.pointee.avail_out), status)
            }
            if produced > 0 { try emit(Array(scratch[0..<produced])) }
            // A full scratch buffer may mean more output is waiting; otherwise zlib is done with this call.
            if status == Z_STREAM_END || (produced < scratch.count && stream.pointee.avail_in == 0) { return }
            precondition(status == Z_OK || status == Z_BUF_ERROR, "deflate failed: \(status)")
        }
    }
}
