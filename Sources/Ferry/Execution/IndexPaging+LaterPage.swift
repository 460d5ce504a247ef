import FerryHTTP

extension IndexPaging {
    /// A page read from a snapshot. The order of checks keeps every failure
    /// indistinguishable to anyone but the snapshot's owner: a token that is
    /// malformed, unknown, lost, or bound to another user, resource, filters, order or
    /// page size answers 404 `paging_token_not_found`; only the owner learns that it
    /// expired (410) or that a page is out of range (400).
    func laterPage(
        request: HTTPRequest, caller: Caller, token text: String, page: Int, query: PagedIndexQuery, binding: Binding
    ) throws -> IndexPage {
        guard let token = PagingToken(parsing: text) else {
            _ = try callerID(caller)
            throw PagingProblem.notFound
        }
        switch store.read(token: token, page: page, pageSize: binding.limit) {
        case .expired:
            let userID = try callerID(caller)
            throw token.isBound(to: binding.fingerprint(userID: userID)) ? PagingProblem.expired : PagingProblem.notFound
        case .absent, .incomplete:
            _ = try callerID(caller)
            throw PagingProblem.notFound
        case .unavailable(let error):
            _ = try callerID(caller)
            if let held = storeWarnings.admit() {
                logger.warning("paging snapshot not readable", metadata: ["error": "\(error)", "held_back": "\(held)"])
            }
            throw PagingProblem.unavailable(retryAfter: retryAfterSeconds)
        case .found(let header, let ids):
            guard header.fingerprint == binding.fingerprint(userID: header.userID) else {
                _ = try callerID(caller)
                throw PagingProblem.notFound
            }
            guard page <= header.pages else {
                let userID = try callerID(caller)
                throw userID == header.userID ? PagingProblem.pageOutOfRange(page, pages: header.pages) : PagingProblem.notFound
            }
            let statement = PagingSQL.laterPage(query, ids: UUIDBytes.arrayLiteral(ids), userID: header.userID)
            let results = try database.asCaller(caller, [statement])
            guard let row = results.first?.first, row["user_id"] == header.userID, let data = row["data"] else {
                throw PagingProblem.notFound
            }
            return IndexPage(
                data: Array(data.utf8), token: text, page: page, pages: header.pages, total: header.total,
                next: page < header.pages ? IndexPage.link(for: request, token: text, page: page + 1) : nil,
                etag: "\"i\(page)-\(row["count"] ?? "0")-\(row["hash"] ?? "0")\"")
        }
    }
}
