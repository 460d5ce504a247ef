/// A position in the changes feed: everything up to it has been delivered.
///
/// The feed is ordered by `(xid, resource, id)`, where `xid` is the writing
/// transaction's id (`_ferry_xid`, or the xid of an access grant or
/// revocation). A cursor is either
/// - a *frontier* cursor: every entry with `xid <= afterXID` is delivered
///   (given when a page ends below the snapshot frontier), or
/// - a *position*: every entry up to and including `(afterXID, resource, id)`
///   is delivered, and nothing after it (given when a page is full).
///
/// A position reached by downloading from the start of the feed also carries
/// its *base*: the frontier of the download's first page. Every entry its
/// holder may still need (a later state of a row it received) committed after
/// that page's snapshot, so it is at or above the base, and only a purge that
/// passed the base can have removed one (docs/changes-feed.md, "Retention").
/// Without it, a download of rows older than the purge horizon could never
/// take its second page.
///
/// It names nothing but that position: transaction numbers, and for a
/// position the resource and id of the last entry its holder received.
/// Nothing in an answer depends on whether that row exists or who may read
/// it, so a cursor works the same for every caller and reveals nothing; it
/// is not signed, because there is nothing in it to protect.
///
/// Wire form: `"1"` (version) followed by unpadded base64url of
/// `xid (8 bytes, big-endian) | kind (0 frontier, 1 position)`, and for a
/// position `resource length (1 byte) | resource | id length (2 bytes) | id`;
/// kind 2 is a position with a base: `base (8 bytes, big-endian)` after the
/// kind, then the position as for kind 1.
public struct ChangeCursor: Sendable, Equatable {
    /// The transaction id the cursor is at.
    public let afterXID: UInt64
    /// For a position cursor, the last delivered entry's resource and id (as text).
    public let position: (resource: String, id: String)?
    /// For a position reached by a download from the start, its first page's
    /// frontier (0: none, the purge horizon is compared with the position).
    public let base: UInt64

    /// The start of the feed: a full sync.
    public static let start = ChangeCursor(afterXID: 0)

    /// The longest id a cursor carries (bytes).
    static let maxIDBytes = 1024

    /// A frontier cursor (`position` nil) or a position, with its `base` (only a position has one).
    public init(afterXID: UInt64, position: (resource: String, id: String)? = nil, base: UInt64 = 0) {
        self.afterXID = afterXID
        self.position = position
        self.base = position == nil ? 0 : base
    }

    /// This position as the next page of a request from `since` gives it,
    /// with the page's `frontier`: a download from the start takes its first
    /// page's frontier as its base, and its later pages keep that base.
    func continuing(from since: ChangeCursor, frontier: UInt64) -> ChangeCursor {
        ChangeCursor(afterXID: afterXID, position: position, base: since.isStart ? frontier : since.base)
    }

    /// Whether this is the full-sync cursor.
    public var isStart: Bool { afterXID == 0 && position == nil }

    /// Same position, and same base.
    public static func == (a: ChangeCursor, b: ChangeCursor) -> Bool {
        a.afterXID == b.afterXID && a.position?.resource == b.position?.resource && a.position?.id == b.position?.id
            && a.base == b.base
    }

    /// The opaque token.
    public var token: String {
        var bytes: [UInt8] = (0..<8).map { UInt8(truncatingIfNeeded: afterXID >> (56 - 8 * UInt64($0))) }
        if let position {
            let resource = Array(position.resource.utf8)
            let id = Array(position.id.utf8)
            if base > 0 {
                bytes.append(2)
                bytes += (0..<8).map { UInt8(truncatingIfNeeded: base >> (56 - 8 * UInt64($0))) }
            } else {
                bytes.append(1)
            }
            bytes.append(UInt8(resource.count))
            bytes += resource
            bytes += [UInt8(id.count >> 8), UInt8(id.count & 255)]
            bytes += id
        } else {
            bytes.append(0)
        }
        return "1" + Base64URL.encode(bytes)
    }

    /// Parses a token; nil when it is not exactly what ``token`` produces.
    public init?(token: String) {
        guard token.utf8.first == UInt8(ascii: "1"), token.utf8.count <= 2_000,
            let bytes = Base64URL.decode(String(token.dropFirst())), bytes.count >= 9
        else { return nil }
        let xid = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        switch bytes[8] {
        case 0:
            guard bytes.count == 9 else { return nil }
            self.init(afterXID: xid)
        case 1, 2:
            // Kind 2 carries the base before the position.
            let start = bytes[8] == 2 ? 17 : 9
            guard bytes.count >= start + 1 else { return nil }
            let base = bytes[8] == 2 ? bytes[9..<17].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } : 0
            let resourceCount = Int(bytes[start])
            let resourceStart = start + 1
            let idStart = resourceStart + resourceCount + 2
            guard resourceCount > 0, bytes.count >= idStart else { return nil }
            let idCount = Int(bytes[idStart - 2]) << 8 | Int(bytes[idStart - 1])
            guard idCount > 0, idCount <= Self.maxIDBytes, bytes.count == idStart + idCount,
                let resource = String(validating: bytes[resourceStart..<(resourceStart + resourceCount)], as: UTF8.self),
                let id = String(validating: bytes[idStart...], as: UTF8.self),
                !resource.utf8.contains(0), !id.utf8.contains(0),
                bytes[8] == 1 || (base > 0 && base <= UInt64(Int64.max))
            else { return nil }
            self.init(afterXID: xid, position: (resource, id), base: base)
        default:
            return nil
        }
        // Reject every other spelling of the same position.
        guard self.token == token, xid <= UInt64(Int64.max) else { return nil }
    }
}
