/// A content coding the server can apply to a body (RFC 9110 §8.4.1).
public enum ContentCoding: String, Sendable, CaseIterable {
    /// No coding: the bytes as they are.
    case identity
    /// RFC 1952's gzip format.
    case gzip
    /// RFC 1950's zlib format, which HTTP calls "deflate".
    case deflate

    /// The coding a `Content-Encoding` token names, or nil for one the server cannot decode.
    /// `x-gzip` is gzip (RFC 9110 §8.4.1.3).
    init?(token: Substring) {
        switch token.lowercased() {
        case "identity": self = .identity
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        default: return nil
        }
    }

    /// zlib's `windowBits` for this coding's wrapper: +16 asks for a gzip header and trailer.
    var windowBits: Int32 { self == .gzip ? 15 + 16 : 15 }

    /// What a strong entity tag of a body in this coding ends with, inside the quotes,
    /// so that each encoding of the same content has its own strong tag (RFC 9110 §8.8.3).
    var entityTagSuffix: String { "-" + rawValue }
}
