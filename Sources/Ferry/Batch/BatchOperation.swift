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
    /// operation, or a nested batch, is a 400 carrying `operation_index`; a path longer
    /// than `maxPathBytes` (a request line's limit) is 414, as it would be alone: a long
    /// `IN` filter would otherwise hold a pooled connection for its statement timeout.
    static func parse(_ bytes: [UInt8], maxOperations: Int, maxPathBytes: Int) throws -> [BatchOperation] {
        _ = try BodyScan(bytes)
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(bytes))
        } catch {
            // Past the scan, what Foundation refuses is a number no Double holds (1e400) or
            // a bad escape: said as such, not as a body of the wrong shape.
            let reason = ((error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)")
                .replacingOccurrences(of: " in Swift", with: "")
            throw Problem(400, .invalidJson, "the body is not valid JSON here: \(reason)")
        }
        guard let object = parsed as? [String: Any], let list = object["operations"] as? [Any] else {
            throw Problem.badRequest(#"the body must be {"operations": [{"method", "path", "headers"?, "body"?}, ...]}"#)
        }
        guard list.count <= maxOperations else {
            throw Problem(422, .tooManyItems, "at most \(maxOperations) operations per batch; this one has \(list.count)")
        }
        return try list.enumerated().map { index, entry in
            do {
                return try BatchOperation(entry, maxPathBytes: maxPathBytes)
            } catch var problem as Problem {
                problem.extra.append(("operation_index", .int(index)))
                throw problem
            }
        }
    }

    private init(_ entry: Any, maxPathBytes: Int) throws {
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
        guard target.utf8.count <= maxPathBytes else {
            throw Problem(
                414, .uriTooLong,
                "an operation's path has \(target.utf8.count) bytes, more than a request line's \(maxPathBytes) (limits.max_request_line_bytes)")
        }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        // The rules of a request line's target (an encoded NUL or control character, a bad
        // escape, invalid UTF-8: 400), so an operation reaches no route a request could not.
        let path: String, query: [(name: String, value: String)]
        do throws(HTTPError) {
            path = try Self.decoded(parts[0], PercentDecoding.path)
            query = parts.count > 1 ? try Self.decoded(parts[1], PercentDecoding.queryPairs) : []
        } catch {
            throw Problem.badRequest(error.detail)
        }
        if path == "/v1/batch" || path.hasPrefix("/v1/batch/") { throw Problem.badRequest("a batch cannot contain a batch") }
        let rawQuery = parts.count > 1 ? String(parts[1]) : nil
        var headers: [(String, String)] = []
        if let given = object["headers"] {
            guard let dictionary = given as? [String: Any] else { throw Problem.badRequest("headers must be an object of strings") }
            // Header names are case-insensitive: `Content-Type` and `content-type` are one
            // header given twice, which the HTTP parser refuses in a request (two values,
            // two readings of one operation).
            var seen = Set<String>()
            for name in dictionary.keys where !seen.insert(name.lowercased()).inserted {
                throw Problem.badRequest("an operation's headers name \(name.lowercased()) twice")
            }
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

    private static func decoded<T>(
        _ part: Substring, _ decode: (UnsafeBufferPointer<UInt8>) throws(HTTPError) -> T
    ) throws(HTTPError) -> T {
        var part = part
        // withUTF8 rethrows untyped: the typed error rides out in a Result.
        return try part.withUTF8 { bytes in Result { () throws(HTTPError) -> T in try decode(bytes) } }.get()
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
