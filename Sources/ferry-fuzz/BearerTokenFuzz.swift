import Ferry
import FerryHTTP

/// Bearer tokens: the input is an `Authorization` value, read as the parser would
/// deliver it (a request head around it) when the first byte is even, and handed
/// to `BearerToken.from` directly otherwise.
///
/// Properties: a token found is 16 to 512 base64url characters, and is exactly what
/// follows the `Bearer` scheme (any case) and its whitespace; the scheme's case does
/// not change the answer; the hash stored for it is `\x` and 64 lowercase hex digits.
enum BearerTokenFuzz {
    static func run(_ input: UnsafeRawBufferPointer) {
        guard let mode = input.first else { return }
        let value = Array(input.dropFirst())
        if mode & 1 == 0 {
            let head = Array("GET /v1/auth/me HTTP/1.1\r\nHost: fuzz\r\nAuthorization: ".utf8) + value + Array("\r\n\r\n".utf8)
            guard let request = ParserTranscript(head, cuts: [], limits: HTTPLimits()).requests.first?.request else { return }
            check(request)
        } else {
            check(
                HTTPRequest(method: "GET", target: "/", path: "/", headers: HTTPHeaders([("Authorization", String(decoding: value, as: UTF8.self))])))
        }
    }

    static func check(_ request: HTTPRequest) {
        let found = BearerToken.from(request)
        guard let header = request.headers["Authorization"] else { return require(found == nil, "a token without a header") }
        var swapped = request
        swapped.headers.replace("Authorization", swapCase(ofSchemeIn: header))
        require(BearerToken.from(swapped) == found, "the scheme's case changed the answer for \(header.debugDescription)")
        guard let token = found else { return }
        require((16...512).contains(token.utf8.count), "a token of \(token.utf8.count) characters")
        require(token.utf8.allSatisfy { Base64URLAlphabet.characters.contains($0) }, "token \(token.debugDescription)")
        let blanks: Set<Character> = [" ", "\t"]
        let afterScheme = header.drop { $0 == " " }.dropFirst(6)
        require(afterScheme.first == " ", "no space after the scheme in \(header.debugDescription)")
        let trimmed = String(afterScheme.drop { blanks.contains($0) }.reversed().drop { blanks.contains($0) }.reversed())
        require(trimmed == token, "token \(token.debugDescription) from \(header.debugDescription)")
        require(header.drop { $0 == " " }.prefix(6).lowercased() == "bearer", "a token under scheme \(header.prefix(8).debugDescription)")
        let hash = BearerToken.hash(token)
        require(
            hash.utf8.count == 66 && hash.hasPrefix("\\x") && hash.dropFirst(2).allSatisfy { $0.isHexDigit && !$0.isUppercase },
            "hash \(hash.debugDescription)")
    }

    /// The value with the case of the six characters after leading spaces flipped.
    static func swapCase(ofSchemeIn value: String) -> String {
        var bytes = Array(value.utf8)
        var i = 0
        while i < bytes.count, bytes[i] == 0x20 { i += 1 }
        for j in i..<min(i + 6, bytes.count) {
            let letter = bytes[j] | 0x20
            if letter >= 0x61, letter <= 0x7A { bytes[j] ^= 0x20 }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
