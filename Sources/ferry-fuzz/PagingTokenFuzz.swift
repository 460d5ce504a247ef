import Ferry

/// Paging tokens as a client sends them back (`paging_token=`). An input starting
/// with an even byte is taken as is; with an odd one, its bytes are mapped onto the
/// base64url alphabet first.
///
/// Properties: a token that parses is 39 characters and prints back to exactly the
/// text it was read from (one spelling per token, so the text cannot be varied to
/// name another snapshot); the paging parameters either parse with the token as sent
/// or answer 400 `invalid_query`.
enum PagingTokenFuzz {
    static func run(_ input: UnsafeRawBufferPointer) {
        guard let mode = input.first else { return }
        let rest = input.dropFirst()
        let text = mode & 1 == 0 ? String(decoding: rest, as: UTF8.self) : Base64URLAlphabet.text(rest)
        if let token = PagingToken(parsing: text) {
            require(text.utf8.count == PagingToken.textLength, "a token of \(text.utf8.count) characters parsed")
            require(token.text == text, "token \(text.debugDescription) prints back as \(token.text.debugDescription)")
            require(PagingToken(parsing: token.text) == token, "a printed token does not parse back")
        }
        do {
            let paging = try PagingRequest(query: [("paging_token", text), ("page", String(mode % 4 + 1))])
            require(paging.token == text && paging.page == Int(mode % 4) + 1, "paging parameters changed")
        } catch {
            QueryFuzz.requireInvalidQuery(error, "PagingRequest")
        }
    }
}
