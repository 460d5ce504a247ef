import FerryHTTP

/// A write body, checked just enough to plan it: JSON content type, the
/// structure scan, the item count limit. PostgreSQL does the parsing.
struct WriteBody {
    /// The JSON array of items handed to the statement as `$1`.
    let items: String
    /// How many items.
    let count: Int
    /// Whether the client sent one object (not an array).
    let single: Bool

    /// - Parameters:
    ///   - allowObject: a single object is accepted (wrapped as a one-item array).
    ///   - allowArray: an array of objects is accepted.
    init(_ request: HTTPRequest, maxItems: Int, allowObject: Bool, allowArray: Bool) throws {
        try RequestBody.requireJSON(request)
        let scan = try BodyScan(request.body)
        let text = String(decoding: request.body, as: UTF8.self)
        switch scan.top {
        case .object:
            guard allowObject else { throw Problem(400, "bad_request", "this request takes a JSON array of objects") }
            items = "[" + text + "]"
            count = 1
            single = true
        case .array:
            guard allowArray else { throw Problem(400, "bad_request", "this request takes one JSON object") }
            guard scan.count <= maxItems else {
                throw Problem(422, "too_many_items", "at most \(maxItems) items per request; this one has \(scan.count)")
            }
            items = text
            count = scan.count
            single = false
        }
    }
}
