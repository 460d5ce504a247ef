// Content codings both ways: `ContentCoding` and the `HTTPCompression`
// settings; the decoding of a coded request body; the choice of the response
// coding from `Accept-Encoding` (`AcceptEncoding`); and the per-coding entity
// tags (`EntityTagCoding`). The zlib streams themselves are Deflater.swift and
// Inflater.swift. `ServerShared.answer` (Server/ServerShared+Codings.swift)
// applies them around every responder call, and `HTTPResponse.encoded`
// (Response/HTTPResponse+Coding.swift) compresses an answer.

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

/// How the server compresses answers.
///
/// Bodies of JSON types (`application/json`, `application/problem+json`, any
/// `+json`) are compressed when the request's `Accept-Encoding` allows gzip
/// or deflate: in-memory bodies from `minimumBytes` up, streamed bodies
/// always, as they stream. Coded request bodies (`Content-Encoding: gzip` or
/// `deflate`) are decoded whatever these settings say.
public struct HTTPCompression: Sendable, Equatable {
    /// zlib's level, 1 (fastest) to 9 (smallest); 0 turns response compression off.
    public var level: Int
    /// The smallest in-memory body worth compressing; smaller ones go as they are.
    public var minimumBytes: Int

    /// Settings; the defaults favour throughput (level 1) and skip bodies under 1 KiB,
    /// which gain little and would cost a deflate stream each.
    public init(level: Int = 1, minimumBytes: Int = 1024) {
        self.level = max(0, min(9, level))
        self.minimumBytes = max(0, minimumBytes)
    }

    /// Whether a `Content-Type` value names a JSON type, the types the server compresses.
    ///
    /// On the value's bytes: every answer asks, and the String version (prefix,
    /// trim, lowercased) was a noticeable share of even a /healthz answer.
    static func compresses(contentType: String) -> Bool {
        if let answer = contentType.utf8.withContiguousStorageIfAvailable({ compresses(type: $0) }) { return answer }
        return Array(contentType.utf8).withUnsafeBufferPointer { compresses(type: $0) }
    }

    private static func compresses(type value: UnsafeBufferPointer<UInt8>) -> Bool {
        // The media type: up to any parameters, without the spaces around it.
        var end = value.firstIndex(of: UInt8(ascii: ";")) ?? value.count
        var start = 0
        while start < end, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
        while end > start, value[end - 1] == 0x20 || value[end - 1] == 0x09 { end -= 1 }
        let type = UnsafeBufferPointer(rebasing: value[start..<end])
        guard startsCaseInsensitively(type, with: "application/") else { return false }
        let subtype = UnsafeBufferPointer(rebasing: type[12...])
        if subtype.count == 4 { return startsCaseInsensitively(subtype, with: "json") }
        return subtype.count >= 5 && startsCaseInsensitively(UnsafeBufferPointer(rebasing: subtype[(subtype.count - 5)...]), with: "+json")
    }

    /// Whether `bytes` begin with `word` (lowercase ASCII), letters compared without case.
    private static func startsCaseInsensitively(_ bytes: UnsafeBufferPointer<UInt8>, with word: StaticString) -> Bool {
        guard bytes.count >= word.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for index in 0..<expected.count {
            var byte = bytes[index]
            if byte >= 0x41, byte <= 0x5A { byte |= 0x20 }
            guard byte == expected[index] else { return false }
        }
        return true
    }
}

extension HTTPRequest {
    /// Decodes a body sent with `Content-Encoding` (gzip, x-gzip, deflate, identity; several
    /// in the order applied), so that handlers only ever see plain bodies; the field is then
    /// removed and `Content-Length` says the decoded size.
    ///
    /// - Throws: 415 for a coding the server cannot decode (with `Accept-Encoding` naming
    ///   those it can, RFC 9110 §15.5.16), 400 for a corrupt or truncated stream, 413 when
    ///   the decoded body would exceed `maxBodyBytes`, found while inflating.
    mutating func decodeContentEncoding(maxBodyBytes: Int) throws(HTTPCodingRefusal) {
        let fields = headers.values("Content-Encoding")
        guard !fields.isEmpty else { return }
        var codings: [ContentCoding] = []
        for token in fields.flatMap({ $0.split(separator: ",") }) {
            let name = token.trimmingASCIISpaces
            if name.isEmpty { continue }
            guard let coding = ContentCoding(token: name) else { throw .unsupported(String(name)) }
            if coding != .identity { codings.append(coding) }
        }
        headers.remove("Content-Encoding")
        // An empty body has nothing to decode, whatever it claims.
        guard !body.isEmpty, !codings.isEmpty else { return }
        for coding in codings.reversed() {
            do {
                body = try Inflater.inflate(body, coding: coding, limit: maxBodyBytes)
            } catch .tooLarge {
                throw .tooLarge(limit: maxBodyBytes)
            } catch {
                throw .corrupt(coding)
            }
        }
        if headers.contains("Content-Length") { headers.replace("Content-Length", String(body.count)) }
    }
}

/// An `Accept-Encoding` field value (RFC 9110 §12.5.3), reduced to the choice
/// between the codings the server can produce.
struct AcceptEncoding {
    /// The qvalue of each coding the field names (in thousandths); `*` under `star`.
    private var weights: [String: Int] = [:]
    private var star: Int?

    /// Parses a list like `gzip;q=1.0, identity; q=0.5, *;q=0`; malformed members are skipped.
    init(_ value: String) {
        for member in value.split(separator: ",") {
            let parts = member.split(separator: ";")
            guard let name = parts.first?.trimmingASCIISpaces.lowercased(), !name.isEmpty else { continue }
            var weight = 1000
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingASCIISpaces.lowercased() == "q" else { continue }
                weight = Self.qvalue(pair[1].trimmingASCIISpaces) ?? 0
            }
            if name == "*" { star = weight } else { weights[name] = max(weights[name] ?? 0, weight) }
        }
    }

    /// The coding to answer in: the acceptable one with the highest qvalue, gzip before deflate
    /// on a tie. Identity, unless named or covered by `*`, ranks below any acceptable coding.
    ///
    /// When every coding is refused, identity included (`identity;q=0` or `*;q=0`), the answer is
    /// identity anyway rather than 406: RFC 9110 §12.1 lets a server disregard the field, and a
    /// client that cannot read identity JSON has no use for a problem it cannot read either.
    func preferred() -> ContentCoding {
        var best: ContentCoding = .identity
        var bestWeight = 0
        for coding in [ContentCoding.gzip, .deflate] {
            let weight = weights[coding.rawValue] ?? (coding == .gzip ? weights["x-gzip"] : nil) ?? star ?? 0
            if weight > bestWeight {
                best = coding
                bestWeight = weight
            }
        }
        if let identity = weights["identity"] ?? star, identity > bestWeight { return .identity }
        return best
    }

    /// `0`, `0.5`, `1.000` as thousandths; nil when it is not a qvalue.
    private static func qvalue(_ text: Substring) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole == "0" || whole == "1" else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 3, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        fraction += String(repeating: "0", count: 3 - fraction.count)
        let value = (whole == "1" ? 1000 : 0) + (Int(fraction) ?? 0)
        return value > 1000 ? nil : value
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (OWS).
    var trimmingASCIISpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}

/// Entity tags per content coding (RFC 9110 §8.8.3): a compressed body's strong tag is
/// the handler's tag with `-gzip` (or `-deflate`) added inside the quotes, so that caches
/// never confuse the two encodings. Handlers only ever see and produce the plain tags:
/// the suffixes are removed from `If-None-Match` and `If-Match` before they run, which
/// makes a validator from either encoding name the same content.
///
/// Handlers therefore must not make tags that themselves end in `-gzip` or `-deflate`.
enum EntityTagCoding {
    /// The field value with every tag's coding suffix removed. A suffix followed by the
    /// closing quote can only end a tag: quotes open a tag after `W/`, a comma or a space.
    static func plain(_ value: String) -> String {
        guard value.contains("-") else { return value }
        var value = value
        for coding in [ContentCoding.gzip, .deflate] {
            value = value.replacing(coding.entityTagSuffix + "\"", with: "\"")
        }
        return value
    }

    /// The strong tag for a body in `coding`; weak tags stay as they are, since
    /// weak comparison already treats both encodings as equivalent.
    static func coded(_ etag: String, _ coding: ContentCoding) -> String {
        guard coding != .identity, etag.hasPrefix("\""), etag.hasSuffix("\""), etag.count >= 2 else { return etag }
        return String(etag.dropLast()) + coding.entityTagSuffix + "\""
    }

    /// The tag a 304 answers with: the coded form the client holds, when its
    /// `If-None-Match` named this content by that form, else the plain tag.
    static func notModified(_ etag: String, ifNoneMatch: String?) -> String {
        guard let ifNoneMatch else { return etag }
        for coding in [ContentCoding.gzip, .deflate] {
            let tag = coded(etag, coding)
            if tag != etag, ifNoneMatch.contains(tag) { return tag }
        }
        return etag
    }
}

/// Why a coded request body was refused.
enum HTTPCodingRefusal: Error, Equatable {
    case unsupported(String)
    case corrupt(ContentCoding)
    case tooLarge(limit: Int)

    /// The refusal. The body was read whole, so the connection stays usable.
    var error: HTTPError {
        switch self {
        case .unsupported(let name):
            HTTPError(
                status: 415, reason: .contentCodingUnsupported,
                detail: "The content coding \(name) is not supported; send gzip, deflate or identity.",
                headers: HTTPHeaders([("Accept-Encoding", "gzip, deflate")]), closeConnection: false)
        case .corrupt(let coding):
            HTTPError(
                status: 400, reason: .contentCodingCorrupt,
                detail: "The \(coding.rawValue) request body is corrupt or cut short.", closeConnection: false)
        case .tooLarge(let limit):
            HTTPError(
                status: 413, reason: .bodyTooLarge, detail: "The decoded request body exceeds \(limit) bytes.",
                closeConnection: false)
        }
    }
}
