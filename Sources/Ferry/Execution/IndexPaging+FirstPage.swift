import FerryHTTP

extension IndexPaging {
    /// Page 1: one statement builds the ordered id list, counts it and renders the
    /// first page; a result longer than one page is then stored as a snapshot.
    func firstPage(
        request: HTTPRequest, caller: Caller, query: PagedIndexQuery, binding: Binding, notModified: (String) -> Bool
    ) throws -> Answer {
        let results = try database.asCaller(
            caller, [PagingSQL.sortMemory, PagingSQL.firstPage(query, limit: binding.limit)])
        guard let row = results.last?.first, let userID = row["user_id"], let total = row["total"].flatMap({ Int($0) }),
            let data = row["data"]
        else { throw Problem(500, .internalError, "the paging query returned no row") }
        let pages = max(1, (total + binding.limit - 1) / binding.limit)
        let etag = "\"i-\(total)-\(row["hash"] ?? "0")\""
        if notModified(etag) { return .notModified(etag: etag) }
        guard let snapshot = row["snapshot"] else {
            return .page(IndexPage(data: Array(data.utf8), token: nil, page: 1, pages: pages, total: total, next: nil, etag: etag))
        }
        var ids: [UInt8] = []
        guard UUIDBytes.appendConcatenated(snapshot, to: &ids), ids.count == total * 16 else {
            throw Problem(500, .internalError, "the paging query returned ids that are not UUIDs")
        }
        let token: PagingToken
        do {
            (token, _) = try store.store(
                ids: ids, fingerprint: binding.fingerprint(userID: userID), userID: userID, pageSize: binding.limit)
        } catch {
            if let held = storeWarnings.admit() {
                logger.warning("paging snapshot not stored", metadata: ["error": "\(error)", "ids": "\(total)", "held_back": "\(held)"])
            }
            throw PagingProblem.unavailable(retryAfter: retryAfterSeconds)
        }
        let text = token.text
        return .page(
            IndexPage(
                data: Array(data.utf8), token: text, page: 1, pages: pages, total: total,
                next: IndexPage.link(for: request, token: text, page: 2), etag: etag))
    }
}
