import FerryHTTP
import FerryPostgres

/// `/v1/auth/token`, `/v1/auth/me` and `/v1/users`.
struct AuthRoutes: Sendable {
    let auth: AuthService
    let allowSignup: Bool
    /// Whether Ferry's own tokens are on (`auth.builtin_tokens`); without them
    /// only `/v1/auth/me` is served, and `/v1/auth/token` is 404.
    let builtinTokens: Bool

    func register(on router: inout Router, handle: RouteHandling) {
        router.get("/v1/auth/me", handle { request, context in try me(request, context) })
        guard builtinTokens else {
            // Not a resource either: 404 to every method, never 405 from the resource routes' patterns.
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
                router.add(
                    method, "/v1/auth/token",
                    handle { _, _ in
                        throw Problem.notFound("Ferry's own tokens are off (auth.builtin_tokens); sign in with your identity provider")
                    })
            }
            return
        }
        router.post("/v1/auth/token", handle { request, _ in try signIn(request) })
        router.delete("/v1/auth/token", handle { request, context in try revoke(request, context) })
        if allowSignup {
            router.post("/v1/users", handle { request, _ in try signUp(request) })
        }
    }

    func signIn(_ request: HTTPRequest) throws -> HTTPResponse {
        // It reads no body, but one sent must still be JSON, as everywhere (docs/API.md, "Conventions").
        if !request.body.isEmpty { try RequestBody.requireJSON(request) }
        guard let credentials = try BasicCredentials(request) else {
            throw Problem(
                401, .unauthorized, "send the name and password with HTTP Basic authentication",
                headers: HTTPHeaders([("WWW-Authenticate", #"Basic realm="ferry", charset="UTF-8""#)]))
        }
        let outcome: AuthService.SignIn
        do {
            outcome = try auth.signIn(name: credentials.name, password: credentials.password)
        } catch let error as PostgresError where error.sqlState == "FR403" {
            // Only after the password held: a stranger learns nothing of the account.
            throw Problem(403, .forbidden, "this user is disabled; the app's operator can enable them again")
        }
        switch outcome {
        case .issued(let issued):
            return .json(
                JSONValue.object([
                    ("token", .string(issued.token)), ("expires_at", .int(Int(issued.expiresAt))),
                    ("user_id", .string(issued.userID)),
                ]).bytes, status: 201, headers: HTTPHeaders([("Cache-Control", "no-store")]))
        case .invalid:
            throw Problem(
                401, .unauthorized, "wrong name or password",
                headers: HTTPHeaders([("WWW-Authenticate", #"Basic realm="ferry", charset="UTF-8""#)]))
        case .throttled(let ms):
            let seconds = max(1, Int((ms + 999) / 1000))
            throw Problem(
                429, .rateLimited, "too many failed sign-ins; retry later",
                headers: HTTPHeaders([("Retry-After", String(seconds))]))
        }
    }

    func revoke(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let credential = try Caller.credential(request)
        guard case .token(let hash) = credential else {
            _ = try auth.database.asCaller(context.caller(credential), [])  // a bad JWT is 401 first
            throw Problem.badRequest("a JWT is not revoked here: it is valid until it expires; sign out at its identity provider")
        }
        _ = try auth.database.asCaller(context.caller(credential), [PlannedStatement("SELECT ferry.revoke_token(\(bind: hash)::bytea)" as SQLQuery)])
        // Committed: from now on this process looks the token up again, and finds it revoked.
        auth.database.forgetToken(hash)
        return HTTPResponse(status: 204)
    }

    func me(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let result = try auth.database.asCaller(
            context.caller(try Caller.credential(request)),
            [
                PlannedStatement("SELECT json_build_object('id', id, 'name', name, 'created_at', created_at) AS me FROM ferry.me()")
            ])[0]
        guard let json = try result.first?.string("me") else { throw Problem.unauthorized() }
        return .json(Array(json.utf8))
    }

    func signUp(_ request: HTTPRequest) throws -> HTTPResponse {
        let body = try RequestBody.smallObject(request)
        guard let name = body["name"] as? String, let password = body["password"] as? String else {
            throw Problem(
                422, .validationFailed, "name and password are required strings",
                extra: [("errors", .array([.object([("field", "name")]), .object([("field", "password")])]))])
        }
        let id = try AuthService.createUser(name: name, password: password) { try auth.database.anonymous([$0])[0] }
        return .json(JSONValue.object([("id", .string(id)), ("name", .string(name))]).bytes, status: 201)
    }
}
