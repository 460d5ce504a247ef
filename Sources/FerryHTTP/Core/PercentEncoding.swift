/// Text put into a URL's path or query: every byte of its UTF-8 but RFC 3986's unreserved
/// ones (ASCII letters, digits, `-._~`) percent-encoded, and those of `keeping`. Names
/// come from the schema, where a table may be `"Odd Things"` or `"Café"`: GET /v1's
/// `path` and the OpenAPI document's paths gave them raw, a space in a URL.
public enum PercentEncoding {
    public static func encoded(_ text: String, keeping: Set<UInt8> = []) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case _ where keeping.contains(byte):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
