import FerryHTTP
import Foundation

/// One operation of a `POST /v1/batch` body, checked and turned into the
/// request it stands for.
struct BatchOperation {
    let method: String
    let path: String
    let query: [(name: String, value: String)]
    let rawQuery: String?
    let target: String
    let headers: [(String, String)]
    let body: [UInt8]?

    /// The operations of a batch body: `{"operations": [...]}` with at most
    /// `maxOperations` entries (else 422 `too_many_items`). A malformed
    /// operation, or a nested batch, is a 400 carrying `operation_index`.
    static func parse(_ bytes: [UInt8], maxOperations: Int) throws -> [BatchOperation] {
        _ = try BodyScan(bytes)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let list = object["operations"] as? [Any]
        else {
            throw Problem.badRequest(#"the body must be {"operations": [{"method", "path", "headers"?, "body"?}, ...]}"#)
        }
        guard list.count <= maxOperations else {
            throw Problem(422, .tooManyItems, "at most \(maxOperations) operations per batch; this one has \(list.count)")
        }
        return try list.enumerated().map { index, entry in
            do {
                return try BatchOperation(entry)
            } catch var problem as Problem {
                problem.extra.append(("operation_index", .int(index)))
                throw problem
            }
        }
    }

    private init(_ entry: Any) throws {
        guard let object = entry as? [String: Any] else { throw Problem.badRequest("an operation must be a JSON object") }
        if let unknown = object.keys.first(where: { !["method", "path", "headers", "body"].contains($0) }) {
            throw Problem.badRequest("an operation has no member \(unknown)")
        }
        // The five methods of the resource actions: a batch changes rows, and anything else
        // (HEAD, OPTIONS) would only answer what a plain request answers.
        guard let method = object["method"] as? String, ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(method) else {
            throw Problem.badRequest("an operation's method is one of GET, POST, PUT, PATCH and DELETE")
        }
        guard let target = object["path"] as? String, target.hasPrefix("/"),
            target.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F })
        else {
            throw Problem.badRequest("an operation needs a path starting with /, without spaces")
        }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = String(parts[0]).removingPercentEncoding else { throw Problem.badRequest("the path is not valid percent-encoding") }
        if path == "/v1/batch" || path.hasPrefix("/v1/batch/") { throw Problem.badRequest("a batch cannot contain a batch") }
        var query: [(name: String, value: String)] = []
        let rawQuery = parts.count > 1 ? String(parts[1]) : nil
        for pair in (rawQuery ?? "").split(separator: "&") {
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) throws -> String {
                guard let value = s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw Problem.badRequest("the query is not valid percent-encoding")
                }
                return value
            }
            let name = try decode(halves[0])
            let value = halves.count > 1 ? try decode(halves[1]) : ""
            query.append((name, value))
        }
        var headers: [(String, String)] = []
        if let given = object["headers"] {
            guard let dictionary = given as? [String: Any] else { throw Problem.badRequest("headers must be an object of strings") }
            for (name, value) in dictionary.sorted(by: { $0.key < $1.key }) {
                guard let value = value as? String, !name.isEmpty,
                    (name + value).utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F })
                else {
                    throw Problem.badRequest("headers must be an object of strings")
                }
                // The batch's own caller, framing and key apply; an operation cannot change them.
                guard !["authorization", "host", "content-length", "transfer-encoding", "idempotency-key"].contains(name.lowercased()) else {
                    continue
                }
                headers.append((name, value))
            }
        }
        if let body = object["body"] {
            self.body = Array(try JSONSerialization.data(withJSONObject: body, options: [.fragmentsAllowed]))
            if !headers.contains(where: { $0.0.lowercased() == "content-type" }) { headers.append(("Content-Type", "application/json")) }
        } else {
            self.body = nil
        }
        self.method = method
        self.path = path
        self.query = query
        self.rawQuery = rawQuery
        self.target = target
        self.headers = headers
    }

    /// The request, as the batch's caller.
    func request(authorization: String?) -> HTTPRequest {
        var headers = HTTPHeaders(self.headers)
        if let authorization { headers.add("Authorization", authorization) }
        return HTTPRequest(
            method: method, target: target, path: path, rawQuery: rawQuery, query: query,
            headers: headers, body: body ?? [])
    }
}
