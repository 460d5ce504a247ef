/// The paging parameters of an Index request: `paging_token` and `page`.
public struct PagingRequest: Sendable, Equatable {
    /// The query parameters paging owns; they are not part of the binding's filters.
    static let reservedNames: Set<String> = ["paging_token", "page", "limit"]

    /// The token as sent, nil for a first request.
    public var token: String?
    /// The page asked for (1-based).
    public var page: Int

    /// The largest page number accepted (keeps position arithmetic far from overflow).
    static let maxPage = 100_000_000

    /// Reads `paging_token` and `page` from a request's decoded query.
    ///
    /// - `page` without `paging_token`, a repeated parameter, or a `page` that is
    ///   not a whole number from 1 to 100,000,000: 400 `invalid_query`.
    /// - `paging_token` without `page` means page 1 of that snapshot.
    /// - The token's own form is checked later (a malformed one answers 404).
    public init(query: [(name: String, value: String)]) throws {
        let tokens = query.filter { $0.name == "paging_token" }.map(\.value)
        let pages = query.filter { $0.name == "page" }.map(\.value)
        guard tokens.count <= 1, pages.count <= 1 else {
            throw Problem(400, .invalidQuery, "paging_token and page may each be given once")
        }
        token = tokens.first
        guard let text = pages.first else {
            page = 1
            return
        }
        guard token != nil else {
            throw Problem(400, .invalidQuery, "page needs a paging_token from the first page's answer")
        }
        guard let number = QueryInteger.parse(text), (1...Self.maxPage).contains(number) else {
            throw Problem(400, .invalidQuery, "page must be a whole number from 1 to \(Self.maxPage)")
        }
        page = number
    }
}
