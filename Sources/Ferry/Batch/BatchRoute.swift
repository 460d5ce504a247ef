import FerryHTTP

/// `POST /v1/batch`: operations run in order, in ONE transaction, as the
/// batch's caller. All apply or none.
///
/// Design: each operation is dispatched through the same routes a lone
/// request would reach, so its status, headers and body are exactly what it
/// would get alone. The operations depend on each other's effects (a DELETE
/// then a POST of the same unique pair), so they cannot share one pipeline:
/// the batch holds one transaction open on one pooled connection (BEGIN;
/// the token check, `PostgresGateway.tokenCheck`; each operation's statements; COMMIT) and every
/// action's `PostgresGateway.asCaller` joins it: each operation's context carries it
/// (see ``CallerTransaction``). That
/// costs a round trip per statement, which is acceptable for batches.
///
/// The first operation answering 400 or more stops the batch and rolls back
/// everything; the answer is that operation's status and problem, plus
/// `operation_index`.
struct BatchRoute: Sendable {
    let database: PostgresGateway
    /// Every route an operation may reach (the batch route is not among them).
    let operations: Router
    let maxOperations: Int
    /// An operation's longest path: a request line's limit, so a batch reaches no query a
    /// request could not.
    let maxPathBytes: Int

    func register(on router: inout Router, handle: RouteHandling) {
        let route = self
        router.post("/v1/batch", handle { try route.batch($0, $1) })
    }

    func batch(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let hash = try Caller.credential(request)
        let operations: [BatchOperation]
        do {
            try RequestBody.requireJSON(request)
            operations = try BatchOperation.parse(request.body, maxOperations: maxOperations, maxPathBytes: maxPathBytes)
        } catch {
            _ = try database.asCaller(context.caller(hash), [])  // a bad token is 401 before any body error
            throw error
        }
        let authorization = request.headers["Authorization"]
        return try database.callerTransaction(context.caller(hash)) { transaction in
            var results: [JSONValue] = []
            for (index, operation) in operations.enumerated() {
                var inner = RequestContext(
                    requestID: "\(context.requestID).\(index)", remoteAddress: context.remoteAddress, logger: context.logger)
                inner.scope = context.scope.joining(transaction)
                let response = self.operations.respond(to: operation.request(authorization: authorization), context: inner)
                if response.status >= 400 { return .rollback(Self.failure(response, index: index)) }
                results.append(Self.result(response))
            }
            var out: [UInt8] = []
            JSONValue.object([("results", .array(results))]).write(into: &out)
            return .commit(.json(out))
        }
    }

    /// `{"status", "headers", "body"}` of one operation; a non-JSON body is a string, none is null.
    static func result(_ response: HTTPResponse) -> JSONValue {
        var headers: [(String, JSONValue)] = []
        for (name, value) in response.headers.fields {
            if let at = headers.firstIndex(where: { HTTPHeaders.equalNames($0.0, name) }), case .string(let old) = headers[at].1 {
                headers[at].1 = .string(old + ", " + value)
            } else {
                headers.append((name, .string(value)))
            }
        }
        let body: JSONValue
        if case .bytes(let bytes) = response.body, !bytes.isEmpty {
            let type = response.headers["Content-Type"]?.lowercased() ?? ""
            body = type.contains("json") ? .raw(bytes) : .string(String(decoding: bytes, as: UTF8.self))
        } else {
            body = .null
        }
        return .object([("status", .int(response.status)), ("headers", .object(headers)), ("body", body)])
    }

    /// The failing operation's answer with `operation_index` added to its problem.
    static func failure(_ response: HTTPResponse, index: Int) -> HTTPResponse {
        var response = response
        if case .bytes(var bytes) = response.body, let close = bytes.lastIndex(of: UInt8(ascii: "}")) {
            let isEmptyObject = bytes[..<close].last(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x09 && $0 != 0x0D }) == UInt8(ascii: "{")
            bytes.insert(contentsOf: Array(((isEmptyObject ? "" : ",") + "\"operation_index\":\(index)").utf8), at: close)
            response.body = .bytes(bytes)
        } else {
            var out: [UInt8] = []
            JSONValue.object([("status", .int(response.status)), ("operation_index", .int(index))]).write(into: &out)
            response.body = .bytes(out)
            response.headers.replace("Content-Type", "application/problem+json")
        }
        return response
    }
}
