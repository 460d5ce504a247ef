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
