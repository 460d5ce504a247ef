/// The first item of a snapshot: what it is bound to and how it is split.
///
/// Binary, 92 bytes: `FPS` + version 1, the fingerprint (32), the user id as text
/// (36), then big-endian `UInt32`s: total ids, chunk count, ids per chunk, page size,
/// expiry (Unix seconds). It is written last, so a header means every chunk was
/// stored.
struct PagingSnapshotHeader: Sendable, Equatable {
    /// The binding the token was issued for.
    var fingerprint: PagingFingerprint
    /// The user who made the snapshot (checked again inside the page's transaction).
    var userID: String
    /// How many ids the snapshot holds.
    var total: Int
    /// How many chunk items follow.
    var chunkCount: Int
    /// Ids per chunk item (all but the last are full).
    var idsPerChunk: Int
    /// The page size the snapshot was made for.
    var pageSize: Int
    /// The token's expiry, Unix seconds.
    var expiresAt: UInt32

    private static let magic: [UInt8] = [0x46, 0x50, 0x53, 0x01]
    private static let userIDLength = 36
    static let byteCount = 4 + 32 + 36 + 5 * 4

    /// At least 1: an empty snapshot still has one (empty) page.
    var pages: Int { max(1, (total + pageSize - 1) / pageSize) }

    /// The binary form.
    var bytes: [UInt8] {
        var out = Self.magic + fingerprint.bytes + Array(userID.utf8)
        for value in [UInt32(total), UInt32(chunkCount), UInt32(idsPerChunk), UInt32(pageSize), expiresAt] {
            out += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        }
        return out
    }

    init(fingerprint: PagingFingerprint, userID: String, total: Int, idsPerChunk: Int, pageSize: Int, expiresAt: UInt32) {
        self.fingerprint = fingerprint
        self.userID = userID
        self.total = total
        self.chunkCount = (total + idsPerChunk - 1) / idsPerChunk
        self.idsPerChunk = idsPerChunk
        self.pageSize = pageSize
        self.expiresAt = expiresAt
    }

    /// Decodes a stored header; nil for anything else (another format, a damaged item).
    init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount, Array(bytes[0..<4]) == Self.magic else { return nil }
        fingerprint = PagingFingerprint(bytes: Array(bytes[4..<36]))
        userID = String(decoding: bytes[36..<72], as: UTF8.self)
        func word(_ index: Int) -> Int {
            let start = 72 + index * 4
            return Int(bytes[start..<(start + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        total = word(0)
        chunkCount = word(1)
        idsPerChunk = word(2)
        pageSize = word(3)
        expiresAt = UInt32(word(4))
        guard idsPerChunk > 0, pageSize > 0, chunkCount == (total + idsPerChunk - 1) / idsPerChunk else { return nil }
    }

    /// The range of snapshot positions (0-based) that page `page` (1-based) covers.
    func positions(ofPage page: Int) -> Range<Int> {
        let start = min(total, (page - 1) * pageSize)
        return start..<min(total, start + pageSize)
    }
}

/// How snapshots are cut into memcached items.
public enum PagingSnapshotLayout {
    /// Ids per chunk item: 16,384 ids = 256 KiB, a quarter of memcached's default
    /// 1 MiB item limit. A later page reads only the chunk (rarely two) that covers
    /// it, so the chunk size bounds what a page costs to fetch: 256 KiB keeps that
    /// well under a millisecond on loopback, keeps items clear of memcached's
    /// chained large-item path (above 512 KiB), and a 300,000-id snapshot still
    /// needs only 19 items.
    public static let idsPerChunk = 16_384

    /// The key of the header item.
    static func headerKey(_ prefix: String) -> String { prefix + ":h" }

    /// The key of chunk `index`.
    static func chunkKey(_ prefix: String, _ index: Int) -> String { prefix + ":" + String(index) }

    /// The chunks that hold `positions`, for chunks of `idsPerChunk`; nil when `positions` is empty.
    static func chunks(covering positions: Range<Int>, idsPerChunk: Int) -> ClosedRange<Int>? {
        guard !positions.isEmpty else { return nil }
        return (positions.lowerBound / idsPerChunk)...((positions.upperBound - 1) / idsPerChunk)
    }
}
