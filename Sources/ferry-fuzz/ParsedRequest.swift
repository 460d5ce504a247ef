import FerryHTTP

/// An `HTTPRequest` with every field the parser sets, comparable as a whole
/// (the query's tuples keep `HTTPRequest` from being `Equatable`).
struct ParsedRequest: Equatable {
    let method: String
    let target: String
    let path: String
    let rawQuery: String?
    let query: [[String]]
    let version: HTTPVersion
    let headers: HTTPHeaders
    let body: [UInt8]
    let keepAlive: Bool
    let request: HTTPRequest

    init(_ request: HTTPRequest) {
        method = request.method
        target = request.target
        path = request.path
        rawQuery = request.rawQuery
        query = request.query.map { [$0.name, $0.value] }
        version = request.version
        headers = request.headers
        body = request.body
        keepAlive = request.keepAlive
        self.request = request
    }

    static func == (a: ParsedRequest, b: ParsedRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.path == b.path && a.rawQuery == b.rawQuery
            && a.query == b.query && a.version == b.version && a.headers == b.headers && a.body == b.body
            && a.keepAlive == b.keepAlive
    }
}
