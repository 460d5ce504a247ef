import Foundation

/// The `{"errors": [...]}` a write statement raises as FR400's DETAIL, read as JSON.
///
/// The entries echo what the client sent (an item's `id`), and jsonb prints a number
/// in full: `"id": 1e400` comes back as 401 digits, which Foundation's parser refuses
/// ("not representable"). The refusal must still answer 422, not 500, so a number
/// too large for a Double is read as null, the one value an entry can say it with.
enum RefusalDetail {
    static func errors(_ detail: String) -> [[String: Any]]? {
        let object =
            (try? JSONSerialization.jsonObject(with: Data(detail.utf8)))
            ?? (try? JSONSerialization.jsonObject(with: Data(nullingHugeNumbers(detail).utf8)))
        guard let errors = (object as? [String: Any])?["errors"] as? [[String: Any]], !errors.isEmpty else { return nil }
        return errors
    }

    /// `json` with each number outside a Double's range (outside strings) replaced by `null`.
    static func nullingHugeNumbers(_ json: String) -> String {
        var out: [UInt8] = []
        let bytes = Array(json.utf8)
        out.reserveCapacity(bytes.count)
        var i = 0
        var inString = false, escaped = false
        while i < bytes.count {
            let byte = bytes[i]
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                out.append(byte)
                i += 1
            } else if byte == 0x22 {
                inString = true
                out.append(byte)
                i += 1
            } else if byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) {
                var end = i + 1
                while end < bytes.count, Self.numberBytes.contains(bytes[end]) { end += 1 }
                let token = bytes[i..<end]
                if let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite {
                    out.append(contentsOf: token)
                } else {
                    out.append(contentsOf: "null".utf8)
                }
                i = end
            } else {
                out.append(byte)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let numberBytes = Set("0123456789+-.eE".utf8)
}
