import Crypto
import FerryHTTP
import Foundation

/// `Idempotency-Key` on POST, PUT, PATCH and DELETE (batch included).
///
/// A request with a key runs in one transaction: claim the key
/// (`ferry.idempotency_claim`, migrations/0005), run the write, store the
/// completed response (`ferry.idempotency_store`), commit. The stored
/// response is thus written in the same transaction as the write it
/// describes: a crash before COMMIT leaves neither, and the retry runs
/// again. A concurrent request with the same key finds the claim's
/// advisory lock taken and answers 409 `idempotency_key_in_use`.
///
/// Only successful answers (below 400) are stored. A failed request wrote
/// nothing, so running its retry again is as safe as replaying it, and the
/// retry may succeed once the cause is fixed (a 503, a 409 resolved).
///
/// Inside a batch, an operation's own key is ignored: the batch's key covers it.
struct IdempotentWrites: Middleware {
    let database: PostgresGateway
    let ttlHours: Int

    func respond(to request: HTTPRequest, context: RequestContext, next: Next) throws -> HTTPResponse {
        guard let key = request.headers["Idempotency-Key"], context.scope.transaction == nil else { return try next(request, context) }
        let caller = context.caller(try Caller.credential(request))
        // RFC 5234 VCHAR only, as the contract says: a space or a byte past ASCII would make the key's
        // identity depend on how each hop trims and re-encodes the header.
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            _ = try database.asCaller(caller, [])
            throw Problem.badRequest("Idempotency-Key must be 1 to 255 visible ASCII characters")
        }
        // One key a request: under two, a retry that sent them in the other order (or a hop
        // that kept only one) would be stored apart and run twice.
        guard request.headers.values("Idempotency-Key").count == 1 else {
            _ = try database.asCaller(caller, [])
            throw Problem.badRequest("Idempotency-Key is given more than once")
        }
        let fingerprint = Self.fingerprint(request)
        return try database.callerTransaction(caller) { transaction in
            let claim = try transaction.run([PlannedStatement("SELECT * FROM ferry.idempotency_claim(\(bind: key))" as SQLQuery)])[0]
            guard let row = claim.first else { throw Problem(500, .internalError, "the key claim returned nothing") }
            switch try row.string("state") {
            case "in_use":
                return .rollback(
                    Problem(
                        409, .idempotencyKeyInUse,
                        "a request with this Idempotency-Key is still running; retry it later",
                        headers: HTTPHeaders([("Retry-After", "1")])
                    ).response)
            case "stored":
                guard try row.string("request_hash") == fingerprint else {
                    return .rollback(
                        Problem(
                            422, .idempotencyKeyReused,
                            "this Idempotency-Key was used for a different request"
                        ).response)
                }
                return .rollback(
                    try Self.replay(
                        status: try row.string("status"), headers: try row.string("response_headers"),
                        body: try row.string("response_body")))
            default:
                break
            }
            let response: HTTPResponse
            do { response = try next(request, context.joining(transaction)) } catch let problem as Problem { response = problem.response }
            guard response.status < 400 else { return .rollback(response) }
            guard case .bytes(let body) = response.body else { return .commit(response) }
            let store: SQLQuery = """
                SELECT ferry.idempotency_store(\(bind: key), \(bind: fingerprint)::bytea, \(bind: response.status)::int,
                                               \(bind: .json(Self.encode(response.headers)))::jsonb, \(bind: Self.hex(body))::bytea,
                                               \(bind: ttlHours)::int)
                """
            _ = try transaction.run([PlannedStatement(store)])
            return .commit(response)
        }
    }

    /// SHA-256 of method, target and body, as a bytea literal (`\x...`, how
    /// PostgreSQL prints it back).
    static func fingerprint(_ request: HTTPRequest) -> String {
        var hasher = SHA256()
        hasher.update(data: Array((request.method + " " + request.target + "\n").utf8))
        hasher.update(data: request.body)
        return hex(Array(hasher.finalize()))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = Array(#"\x"#.utf8)
        out.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unhex(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 2 - 1)
        var index = 2
        while index < bytes.count {
            guard let high = value(bytes[index]), let low = value(bytes[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// The headers as a JSON array of `[name, value]` pairs (order and repeats kept).
    static func encode(_ headers: HTTPHeaders) -> String {
        var out: [UInt8] = []
        JSONValue.array(headers.fields.map { .array([.string($0.name), .string($0.value)]) }).write(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The stored response, marked `Idempotent-Replayed: true`.
    static func replay(status: String?, headers: String?, body: String?) throws -> HTTPResponse {
        guard let status = status.flatMap({ Int($0) }), let bytes = body.flatMap(unhex),
            let pairs = try? JSONSerialization.jsonObject(with: Data((headers ?? "[]").utf8)) as? [[String]]
        else {
            throw Problem(500, .internalError, "a stored idempotent response is unreadable")
        }
        var replayed = HTTPHeaders()
        for pair in pairs where pair.count == 2 { replayed.add(pair[0], pair[1]) }
        replayed.replace("Idempotent-Replayed", "true")
        return HTTPResponse(status: status, headers: replayed, bytes: bytes)
    }
}
