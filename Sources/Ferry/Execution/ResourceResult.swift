/// What running a ``ResourcePlan`` found, before it is an answer: rows and
/// their validators as PostgreSQL returned them. ``ResourceExecutor`` makes
/// it; ``ResourceResponse`` turns it into the contract's HTTP answer.
enum ResourceResult: Sendable {
    /// One row by id. `json` is nil when `If-None-Match` named its revision:
    /// the statement then leaves the body out, and the answer is a 304.
    case row(json: String?, revision: Revision, lastModified: Int64?)
    /// A tombstone read by id.
    case tombstone(json: String, revision: Revision)
    /// Multi-show: the JSON array of rows and the fingerprint of their revisions.
    case rows(json: String, fingerprint: String)
    /// An Index that fits one page: its JSON array, how many rows match, the
    /// rows' fingerprint, and the page size asked for.
    case index(data: String, total: Int, fingerprint: String, limit: Int)
    /// A paged Index's page, or its 304: ``IndexPaging`` compares the snapshot's
    /// tag before it reads a page, so that a current client costs no page read.
    case page(IndexPaging.Answer)
    /// What a write returned, and how the client sent it.
    case written(WriteResult, Written)

    /// How a write's answer is shaped.
    enum Written: Sendable, Equatable {
        /// A POST: `single` when the client sent one object, which answers with
        /// the row alone, its status and `Location`.
        case created(resource: String, single: Bool)
        /// A bulk PATCH or DELETE: the array of rows and tombstones.
        case bulk
        /// A PATCH, PUT or DELETE of one row by id: the row with its validators.
        case one
    }
}

/// What a planned write statement returns: `(status, body, revision, last_modified, id)`.
struct WriteResult: Sendable, Equatable {
    /// 201 when something was created, else 200.
    let status: Int
    /// The JSON array of rows (or tombstones), in request order.
    let body: String
    /// The highest revision written (the row's, for a single write).
    let revision: Revision?
    /// The highest last_modified written.
    let lastModified: Int64?
    /// The smallest id (the row's, for a single write).
    let id: String?
}
