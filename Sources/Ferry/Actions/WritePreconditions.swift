import FerryHTTP

/// A write's `If-Match` (strong comparison, 412 when it fails).
struct WritePreconditions: Sendable, Equatable {
    /// The revisions it accepts; nil with no header or with `*`.
    var revisions: [Revision]?
    /// `If-Match: *`: any live row.
    var any = false

    init(revisions: [Revision]? = nil, any: Bool = false) {
        self.revisions = revisions
        self.any = any
    }

    init(_ request: HTTPRequest) {
        guard let header = request.headers["If-Match"] else { return }
        if let revisions = EntityTag.matchRevisions(header) { self.revisions = revisions } else { any = true }
    }
}
