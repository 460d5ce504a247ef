import Glibc

/// A log line being formatted into raw bytes that the formatting thread reuses
/// (see ``LineScratch``): each append is a bounds check and a copy, where
/// appending to a `[UInt8]` went through Array's generic paths and the line cost
/// an allocation. Every request writes one line, so this is on the hot path.
struct LogLine {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    private(set) var count = 0

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// The bytes written so far; valid until the next append.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    var last: UInt8? { count > 0 ? base[count - 1] : nil }

    mutating func removeLast() { count -= 1 }

    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        memcpy(base + count, source, bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        // A native String hands out its storage; a bridged or lazy one is copied first.
        if text.utf8.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) != nil { return }
        var copy = text
        copy.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    private mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let grown = max(capacity * 2, count + extra)
        // The storage is malloc's (LineScratch's), so it grows in place when it can.
        guard let moved = realloc(base, grown) else { fatalError("out of memory growing a log line to \(grown) bytes") }
        base = moved.assumingMemoryBound(to: UInt8.self)
        capacity = grown
    }
}
