import FerryHTTP

/// The Response stage of a resource action: a pure function from what the
/// plan's statements found (``ResourceResult``) and the request's
/// ``ReadConditions`` to the contract's answer. The rules of docs/API.md live
/// here, tested without I/O (ResourceResponseTests): a tombstone is 410
/// whatever the validators say; matching validators are 304 with the ETag (and
/// `Last-Modified`) and no body; a row answers with `ETag: "<revision>"` and
/// `Last-Modified`; an unpaged Index is wrapped in the paging envelope.
enum ResourceResponse {
    static func make(_ result: ResourceResult, conditions: ReadConditions) throws -> HTTPResponse {
        switch result {
        case .row(let json, let revision, let lastModified):
            let etag = EntityTag.revision(revision)
            if conditions.notModified(etag: etag, lastModifiedMs: lastModified) {
                return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: lastModified)
            }
            // The statement leaves the body out only when If-None-Match names this revision: a 304 above.
            guard let json else { throw Problem(500, .internalError, "the row came back without its body") }
            return .json(Array(json.utf8), headers: rowHeaders(etag: etag, lastModified: lastModified))
        case .tombstone(let json, let revision):
            throw Problem.gone(tombstone: json, etag: EntityTag.revision(revision))
        case .rows(let json, let fingerprint):
            let etag = "\"m-\(fingerprint)\""
            if conditions.notModified(etag: etag, lastModifiedMs: nil) {
                return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: nil)
            }
            return .json(Array(json.utf8), headers: HTTPHeaders([("ETag", etag)]))
        case .index(let data, let total, let fingerprint, let limit):
            let etag = "\"i-\(total)-\(fingerprint)\""
            if conditions.notModified(etag: etag, lastModifiedMs: nil) {
                return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: nil)
            }
            return .json(indexEnvelope(data: data, total: total, limit: limit), headers: HTTPHeaders([("ETag", etag)]))
        case .page(.notModified(let etag)):
            return ReadConditions.notModifiedResponse(etag: etag, lastModifiedMs: nil)
        case .page(.page(let page)):
            return page.response()
        case .written(let result, .created(let resource, let single)):
            guard single else { return .json(Array(result.body.utf8), status: result.status) }
            var headers = rowHeaders(result)
            if let id = result.id { headers.add("Location", "/v1/\(resource)/\(id)") }
            return .json(singleRow(result.body), status: result.status, headers: headers)
        case .written(let result, .bulk):
            return .json(Array(result.body.utf8))
        case .written(let result, .one):
            return .json(singleRow(result.body), headers: rowHeaders(result))
        }
    }

    /// `{"data": …, "paging": {…}}` for an Index that is not paged through a
    /// snapshot: no token, page 1, and `complete: false` when more rows match
    /// than the page holds (the client asked for fewer than there are).
    static func indexEnvelope(data: String, total: Int, limit: Int) -> [UInt8] {
        let pages = max(1, (total + limit - 1) / limit)
        var body = Array(#"{"data":"#.utf8)
        body += data.utf8
        body += #","paging":{"token":null,"page":1,"pages":\#(pages),"total":\#(total),"next":null"#.utf8
        if pages > 1 { body += #","complete":false"#.utf8 }
        body += "}}".utf8
        return body
    }

    /// The single row of a one-item write: the array's only element.
    /// One copy of the row, from the string's contiguous UTF-8 (a copy of a UTF8View
    /// slice went byte by byte through the generic sequence copy: ~5 % of a PATCH's
    /// instructions in the ferry process, bench/feed/README.md).
    static func singleRow(_ body: String) -> [UInt8] {
        var body = body
        return body.withUTF8 { bytes in
            guard bytes.count >= 2, bytes.first == UInt8(ascii: "["), bytes.last == UInt8(ascii: "]") else {
                return Array(bytes)
            }
            return Array(UnsafeBufferPointer(rebasing: bytes[1..<(bytes.count - 1)]))
        }
    }

    /// A written row's validators: its ETag and Last-Modified.
    private static func rowHeaders(_ result: WriteResult) -> HTTPHeaders {
        rowHeaders(etag: result.revision.map(EntityTag.revision), lastModified: result.lastModified)
    }

    private static func rowHeaders(etag: String?, lastModified: Int64?) -> HTTPHeaders {
        var headers = HTTPHeaders()
        // ETag, Last-Modified, and the Content-Type or Location added after: one allocation.
        headers.reserveCapacity(4)
        if let etag { headers.add("ETag", etag) }
        if let lastModified { headers.add("Last-Modified", HTTPDateFormat.format(milliseconds: lastModified)) }
        return headers
    }
}
