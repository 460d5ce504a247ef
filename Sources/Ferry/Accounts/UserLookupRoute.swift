import FerryHTTP

/// `GET /v1/users/lookup?name=`: the id of the user with exactly that name,
/// so that an app can share with the person its user typed (issue 48): a
/// Ferry user's name, or a JWT user's lookup name (their provider's verified
/// email, when the provider sets `lookup_claim`; ASCII case aside, core 0029).
///
/// Narrow on purpose, so that it is no oracle of which accounts exist (core
/// migration 0026 says how): exact match only, for a signed-in caller, 30
/// questions per caller in 10 minutes (429 with `Retry-After` past that), and a
/// user who may not be found (disabled), or a name two users answer to, answers
/// as a name nobody has.
struct UserLookupRoute: Sendable {
    let database: PostgresGateway

    func register(on router: inout Router, handle: RouteHandling) {
        router.get("/v1/users/lookup", handle { request, context in try lookup(request, context) })
    }

    func lookup(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let caller = context.caller(try Caller.credential(request))
        let names = request.query.filter { $0.name == "name" }.map(\.value)
        let problem: Problem? =
            if let other = request.query.first(where: { $0.name != "name" }) {
                Problem(400, .invalidQuery, "unknown query parameter \(other.name); the lookup takes name alone")
            } else if names.count != 1 {
                Problem(400, .invalidQuery, "name is required, once: the exact user name to look up")
            } else if !UserName.isValid(names[0], maxBytes: JWTProvider.lookupNameMaxBytes) {
                Problem(
                    400, .invalidQuery,
                    "name is 1 to 320 of A-Z a-z 0-9 _ . @ + - (not starting with . @ + -), as user names and lookup names are")
            } else {
                nil
            }
        if let problem {
            _ = try database.asCaller(caller, [])  // a bad token is 401 first
            throw problem
        }
        let row = try database.asCaller(
            caller, [PlannedStatement("SELECT id, name, retry_after_seconds FROM ferry.lookup_user(\(bind: names[0]))" as SQLQuery)]
        )[0].first
        if let seconds = try row?.string("retry_after_seconds") {
            throw Problem(
                429, .rateLimited, "too many user lookups; retry later",
                headers: HTTPHeaders([("Retry-After", seconds)]))
        }
        guard let row, let id = try row.string("id"), let name = try row.string("name") else {
            // The same answer for a name nobody has, a user who may not be found, and two users.
            throw Problem.notFound("no user with that name can be found")
        }
        return .json(
            JSONValue.object([("id", .string(id)), ("name", .string(name))]).bytes,
            headers: HTTPHeaders([("Cache-Control", "private, no-store")]))
    }
}
