import Crypto

/// What a snapshot is bound to: the user, the resource, the canonical filters and
/// order, and the page size, hashed (SHA-256) so the header stores 32 bytes whatever
/// the query's length. Any difference makes another fingerprint, and a token used
/// with another fingerprint answers 404 `paging_token_not_found`.
public struct PagingFingerprint: Sendable, Equatable {
    /// The 32-byte digest.
    let bytes: [UInt8]

    /// The fingerprint of a request.
    ///
    /// - Parameters:
    ///   - userID: The caller's id (text UUID, as PostgreSQL prints it).
    ///   - resource: The resource name.
    ///   - canonicalQuery: The filters and order in a canonical form (see
    ///     ``PagingFingerprint/canonicalQuery(_:)``); Index may pass its own
    ///     normalised form instead.
    ///   - limit: The page size.
    public init(userID: String, resource: String, canonicalQuery: String, limit: Int) {
        var input: [UInt8] = Array("ferry-paging-v1".utf8)
        for part in [userID.lowercased(), resource, canonicalQuery, String(limit)] {
            input.append(0)
            input += part.utf8
        }
        bytes = Array(SHA256.hash(data: input))
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The query parameters that shape a result (everything except `paging_token`,
    /// `page` and `limit`, which is bound separately), sorted by name then value and
    /// joined unambiguously. Parameter order in the URL therefore does not matter;
    /// a different value, or a differently written list, does.
    public static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        let shaping = query.filter { !PagingRequest.reservedNames.contains($0.name) }
            .sorted { $0.name != $1.name ? $0.name < $1.name : $0.value < $1.value }
        var out = ""
        for (name, value) in shaping {
            // Length prefixes: no choice of names or values can collide with another.
            out += "\(name.utf8.count):\(name)=\(value.utf8.count):\(value);"
        }
        return out
    }
}
