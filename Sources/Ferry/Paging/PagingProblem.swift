import FerryHTTP

/// The paging errors of the contract.
enum PagingProblem {
    /// 404 `paging_token_not_found`: unknown, malformed, lost, or bound to another
    /// user, resource, filters, order or page size. One answer for all of them, so a
    /// token reveals nothing to anyone it does not belong to.
    static let notFound = Problem(
        404, .pagingTokenNotFound,
        "no paging snapshot for this token, user, resource, filters and page size; start again without paging_token")

    /// 410 `paging_token_expired`.
    static let expired = Problem(
        410, .pagingTokenExpired, "the paging snapshot has expired; start again without paging_token")

    /// 503 `paging_unavailable` with `Retry-After`: the result needs paging and
    /// memcached cannot store or read its snapshot. Never a page that could skip rows.
    static func unavailable(retryAfter seconds: Int) -> Problem {
        Problem(
            503, .pagingUnavailable, "paging snapshots are unavailable (memcached is down); retry later",
            headers: HTTPHeaders([("Retry-After", String(seconds))]))
    }

    /// 400 `invalid_query`: a page past the last one of the caller's own snapshot.
    static func pageOutOfRange(_ page: Int, pages: Int) -> Problem {
        Problem(400, .invalidQuery, "page \(page) is past the last page (\(pages)) of this snapshot")
    }
}
