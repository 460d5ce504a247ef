import Ferry
import FerryHTTP

/// The query string: the input is what follows `?` in `GET /v1/terms?...`, read by
/// the parser (percent-decoding, pairs) and then by every reader of a query: Index
/// filters and order (`IndexQuery`), paging (`PagingRequest`), the changes feed
/// (`ChangesRequest`) and the paging binding (`PagingFingerprint.canonicalQuery`).
///
/// Properties: the raw query is kept as sent; pairs percent-encoded again parse to
/// the same pairs; each reader either accepts values within its documented ranges
/// and columns that exist, or answers 400 `invalid_query` (never another error);
/// the canonical query does not depend on parameter order.
enum QueryFuzz {
    static let maxLimit = 1_000

    static func run(_ input: UnsafeRawBufferPointer) {
        let query = Array(input)
        let head = Array("GET /v1/terms?".utf8) + query + Array(" HTTP/1.1\r\nHost: fuzz\r\n\r\n".utf8)
        let transcript = ParserTranscript(head, cuts: [], limits: HTTPLimits())
        guard let request = transcript.requests.first?.request else {
            if let error = transcript.error { require([400, 414].contains(error.status), "query refused with \(error.status)") }
            return
        }
        require(transcript.requests.count == 1, "one request line made \(transcript.requests.count) requests")
        require(request.rawQuery.map { Array($0.utf8) } == query, "the raw query changed")
        require(request.path == "/v1/terms", "the query changed the path to \(request.path.debugDescription)")

        let encoded = request.query.map { PercentEncoding.encoded($0.name) + "=" + PercentEncoding.encoded($0.value) }.joined(separator: "&")
        // Encoding can triple the length; past the request line limit there is nothing to compare.
        if encoded.utf8.count < HTTPLimits().maxRequestLineBytes - 32 {
            let line = Array("GET /v1/terms?\(encoded) HTTP/1.1\r\nHost: fuzz\r\n\r\n".utf8)
            let again = ParserTranscript(line, cuts: [], limits: HTTPLimits())
            require(
                again.requests.first.map { ParsedRequest($0.request).query } == ParsedRequest(request).query,
                "re-encoded pairs parse differently: \(again.error as Any)")
        }

        checkIndexQuery(request.query)
        checkPaging(request.query)
        checkChanges(request)
        let canonical = PagingFingerprint.canonicalQuery(request.query)
        require(PagingFingerprint.canonicalQuery(request.query.reversed()) == canonical, "the canonical query depends on order")
    }

    static func checkIndexQuery(_ pairs: [(name: String, value: String)]) {
        let resource = FuzzCatalog.terms
        do {
            let parsed = try IndexQuery(pairs, resource: resource, defaultLimit: 100, maxLimit: maxLimit)
            require((1...maxLimit).contains(parsed.limit), "limit \(parsed.limit)")
            require(parsed.modifiedSince.map { $0 >= 0 } ?? true, "modified_since \(parsed.modifiedSince as Any)")
            for (column, values) in parsed.filters {
                let type = resource.column(column)?.type
                require(type != nil && type != "json" && type?.hasSuffix("[]") == false, "filter on \(column.debugDescription)")
                require(!values.isEmpty, "a filter without values")
            }
            for (column, _) in parsed.order { require(resource.column(column) != nil, "order by \(column.debugDescription)") }
        } catch {
            requireInvalidQuery(error, "IndexQuery")
        }
    }

    static func checkPaging(_ pairs: [(name: String, value: String)]) {
        do {
            let paging = try PagingRequest(query: pairs)
            require((1...100_000_000).contains(paging.page), "page \(paging.page)")
            require(paging.page == 1 || paging.token != nil, "page \(paging.page) without a token")
        } catch {
            requireInvalidQuery(error, "PagingRequest")
        }
    }

    static func checkChanges(_ request: HTTPRequest) {
        let catalog = FuzzCatalog.catalog
        do {
            let changes = try ChangesRequest(request, catalog: catalog)
            require((1...ChangesRequest.maxLimit).contains(changes.limit), "changes limit \(changes.limit)")
            require(!changes.resources.isEmpty && Set(changes.resources).count == changes.resources.count, "resources \(changes.resources)")
            require(changes.resources.allSatisfy { catalog[$0] != nil }, "an unknown resource in \(changes.resources)")
            if changes.hasSince { require(ChangeCursor(token: changes.since.token) == changes.since, "the since cursor does not re-read") }
        } catch {
            requireInvalidQuery(error, "ChangesRequest")
        }
    }

    static func requireInvalidQuery(_ error: any Error, _ reader: String) {
        guard let problem = error as? Problem else { return require(false, "\(reader) threw \(error)") }
        require(problem.status == 400 && problem.code == .invalidQuery, "\(reader) answered \(problem.status) \(problem.code)")
    }
}
