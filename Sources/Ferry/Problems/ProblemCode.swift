/// Every `code` a problem answer of the contract can carry (docs/API.md, "Error codes"):
/// the one list, so that a code is spelled once, the OpenAPI document lists exactly
/// these, and `ProblemCodeTests` holds them to the docs' table and to the codes the
/// SQL of writes raises (`ferry.fail`'s items), which arrive as text.
public enum ProblemCode: String, CaseIterable, Sendable {
    // 400
    /// The request is malformed: its framing, a header, or a body that is not what the route takes.
    case badRequest = "bad_request"
    /// The body is not JSON, or not the JSON shape the route takes.
    case invalidJson = "invalid_json"
    /// A query parameter is unknown, repeated, or does not fit.
    case invalidQuery = "invalid_query"
    /// An update or delete without `If-Match` or a `revision`.
    case revisionRequired = "revision_required"
    // 401
    /// No valid bearer token.
    case unauthorized = "unauthorized"
    /// A JWT longer than the limit.
    case tokenTooLarge = "token_too_large"
    /// A JWT that is not well formed.
    case tokenMalformed = "token_malformed"
    /// A JWT whose algorithm is refused.
    case tokenAlgorithmRefused = "token_algorithm_refused"
    /// A JWT whose issuer is not a configured provider.
    case tokenUnknownIssuer = "token_unknown_issuer"
    /// A JWT whose key id no key of its provider has.
    case tokenUnknownKey = "token_unknown_key"
    /// A JWT whose signature does not verify.
    case tokenBadSignature = "token_bad_signature"
    /// A JWT with a claim of the wrong type, or without the user claim.
    case tokenInvalidClaim = "token_invalid_claim"
    /// An expired JWT.
    case tokenExpired = "token_expired"
    /// A JWT that is not valid yet.
    case tokenNotYetValid = "token_not_yet_valid"
    /// A JWT for another audience.
    case tokenWrongAudience = "token_wrong_audience"
    /// A JWT that is not an access token: an ID or logout token, or a `typ` the provider's `token_types` refuses.
    case tokenWrongType = "token_wrong_type"
    // 403
    /// An operator's write that their role does not allow.
    case forbidden = "forbidden"
    // 404
    /// No such route, resource or row (for the caller).
    case notFound = "not_found"
    /// No paging snapshot for this token and caller.
    case pagingTokenNotFound = "paging_token_not_found"
    // 405
    /// A method the route does not take (with `Allow`).
    case methodNotAllowed = "method_not_allowed"
    // 408
    /// The request did not arrive in time.
    case requestTimeout = "request_timeout"
    // 409
    /// The row changed since that revision.
    case revisionConflict = "revision_conflict"
    /// A row with this id exists with other values.
    case alreadyExists = "already_exists"
    /// The same key's first request is still running.
    case idempotencyKeyInUse = "idempotency_key_in_use"
    // 410
    /// The row is deleted (its tombstone).
    case gone = "gone"
    /// The paging snapshot has expired.
    case pagingTokenExpired = "paging_token_expired"
    /// The cursor is older than the purge horizon.
    case cursorExpired = "cursor_expired"
    // 412
    /// `If-Match` does not match the current revision.
    case preconditionFailed = "precondition_failed"
    // 413
    /// The body is larger than the limit.
    case payloadTooLarge = "payload_too_large"
    // 414
    /// The request line is longer than the limit.
    case uriTooLong = "uri_too_long"
    // 415
    /// A body that is not `application/json`.
    case unsupportedMediaType = "unsupported_media_type"
    /// A body coding the server does not decode (with `Accept-Encoding`).
    case unsupportedContentEncoding = "unsupported_content_encoding"
    // 422
    /// A value the table refuses, or a write Row Level Security refuses.
    case validationFailed = "validation_failed"
    /// A body member that is no column.
    case unknownField = "unknown_field"
    /// More items than a bulk write or batch takes.
    case tooManyItems = "too_many_items"
    /// The same key with a different request.
    case idempotencyKeyReused = "idempotency_key_reused"
    /// A console write without `{"confirm": true}`.
    case confirmationRequired = "confirmation_required"
    // 429
    /// Too many requests (with `Retry-After`).
    case rateLimited = "rate_limited"
    /// Too many parked waits for this user (with `Retry-After`).
    case tooManyWaiters = "too_many_waiters"
    // 431
    /// The header section is larger than the limit.
    case headersTooLarge = "headers_too_large"
    // 500
    /// A fault of the server's; the request id finds it in the log.
    case internalError = "internal_error"
    // 501
    /// A transfer coding the server does not implement.
    case notImplemented = "not_implemented"
    // 503
    /// Temporarily unavailable (with `Retry-After`).
    case unavailable = "unavailable"
    /// PostgreSQL's disk is full (with `Retry-After`).
    case storageFull = "storage_full"
    /// Memcached cannot hold a paging snapshot (with `Retry-After`).
    case pagingUnavailable = "paging_unavailable"
    /// A provider's keys cannot be fetched and the ones held are too old (with `Retry-After`).
    case jwksUnavailable = "jwks_unavailable"
    // 505
    /// An HTTP version other than 1.0 or 1.1.
    case httpVersionNotSupported = "http_version_not_supported"
}
