import Foundation

/// A user found by ``SyncEngine/lookupUser(name:)``: the id an app writes
/// into a share row (a `set_members.user_id`), and the name it was found by.
public struct FoundUser: Sendable, Equatable, Hashable {
    public let id: String
    public let name: String

    public init(id: String, name: String) { (self.id, self.name) = (id, name) }

    /// ``id`` typed, for a generated record's reference to a user.
    public var userID: FerryID<FerryUser> { FerryID(rawValue: id) }
}

/// Why ``SyncEngine/lookupUser(name:)`` has no answer (a name nobody has is
/// not one of these: it is `nil`).
public enum UserLookupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Too many lookups by this user lately (429): the server says when to
    /// ask again (`Retry-After`), when it does.
    case rateLimited(retryAfter: Date?)
    /// The name cannot be a user name (400); `detail` is the server's rule.
    case invalidName(detail: String)
    /// Any other answer, with its status and the problem's detail.
    case refused(status: Int, detail: String)

    public var description: String {
        switch self {
        case .rateLimited(let date?): return "too many user lookups; ask again after \(date)"
        case .rateLimited(nil): return "too many user lookups; ask again later"
        case .invalidName(let detail): return "not a user name: \(detail)"
        case .refused(let status, let detail): return "the user lookup failed with status \(status): \(detail)"
        }
    }
}

extension SyncEngine {
    /// The user whose name is exactly `name` (`GET /v1/users/lookup`), or a
    /// JWT user whose lookup name (a verified email, when their provider sets
    /// `lookup_claim`) it is, ASCII case aside; so that an app can share with
    /// the person its user typed. `nil` when no user can be found by it (the
    /// server answers a name nobody has, a user who may not be found and a
    /// name two users answer to alike: it is no oracle of accounts).
    ///
    /// Sent with the engine's token, renewed on a 401 as every request is (a
    /// second 401 throws ``FerryKitError/unauthorized``). Throws
    /// ``UserLookupError/rateLimited(retryAfter:)`` past the server's limit
    /// (30 lookups per user in 10 minutes by default), and the transport's
    /// error when there was no answer. Independent of ``sync()``: it neither
    /// waits for a round nor changes the store.
    public func lookupUser(name: String) async throws -> FoundUser? {
        // `+` and `@` are allowed in names and must not reach the server as a space or a separator.
        let encoded = PercentEncoding.encoded(name)
        let response = try await send(TransportRequest(method: "GET", path: "/v1/users/lookup?name=\(encoded)"))
        let detail = response.object?["detail"]?.string ?? ""
        switch response.status {
        case 200:
            guard let id = response.object?["id"]?.string, let found = response.object?["name"]?.string else {
                throw FerryKitError.malformedAnswer("GET /v1/users/lookup answered 200 without an id and a name")
            }
            return FoundUser(id: id, name: found)
        case 404:
            return nil
        case 429:
            let seconds = RetryPolicy.retryAfter(response.headers["retry-after"], now: now())
            throw UserLookupError.rateLimited(retryAfter: seconds.map { now().addingTimeInterval($0) })
        case 400:
            throw UserLookupError.invalidName(detail: detail)
        default:
            throw UserLookupError.refused(status: response.status, detail: detail)
        }
    }
}
