import Foundation

/// Maps fuzz bytes onto the URL-safe base64 alphabet, so most inputs reach the
/// decoders of tokens and cursors instead of stopping at their first character check.
enum Base64URLAlphabet {
    static let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func text(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: bytes.map { characters[Int($0 & 63)] }, as: UTF8.self)
    }
}

extension Base64URLAlphabet {
    /// Unpadded base64url of `bytes`, written with Foundation (not the server's encoder).
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of unpadded base64url `text`, decoded with Foundation; nil when it is not.
    static func decode(_ text: String) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
