/// Maps fuzz bytes onto the URL-safe base64 alphabet, so most inputs reach the
/// decoders of tokens and cursors instead of stopping at their first character check.
enum Base64URLAlphabet {
    static let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func text(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: bytes.map { characters[Int($0 & 63)] }, as: UTF8.self)
    }
}
