import Foundation

/// A bearer token, and when it stops working if the issuer said.
public struct AccessToken: Sendable, Equatable {
    public var value: String
    public var expiresAt: Date?

    public init(_ value: String, expiresAt: Date? = nil) { (self.value, self.expiresAt) = (value, expiresAt) }
}

/// Where ``SyncEngine`` gets the bearer token it sends: the app's session
/// with its identity provider (Auth0, Firebase, Supabase, Keycloak, its own
/// backend issuing JWTs) or Ferry's own sign-in (``FerryAuth/PasswordSession``).
///
/// The engine asks once, keeps the token, and asks again with `refresh: true`
/// when the server refused it (401) or when it expires within a minute
/// (``AccessToken/expiresAt``); then it sends the request once more. A second
/// 401 in a row pauses sync until the app signs in again.
///
/// ```swift
/// let tokens = TokenClosure { refresh in
///     AccessToken(try await auth.currentUser!.getIDToken(forcingRefresh: refresh))   // Firebase
/// }
/// let engine = SyncEngine(store: store, transport: transport, tokens: tokens)
/// ```
public protocol TokenProvider: Sendable {
    /// A token to send: a new one when `refresh` is true (the last one was
    /// refused, or is about to expire). Nil when there is none (the person
    /// signed out): sync pauses. A thrown error (the identity provider cannot
    /// be reached) fails the round, which is tried again later.
    func token(refresh: Bool) async throws -> AccessToken?
}

/// A token that never changes: one issued by `ferry token issue`, a test's.
/// A 401 pauses sync at once: there is no other token to try.
public struct FixedToken: TokenProvider {
    public let token: AccessToken

    public init(_ value: String) { token = AccessToken(value) }

    public func token(refresh: Bool) async throws -> AccessToken? { refresh ? nil : token }
}

/// A closure as a ``TokenProvider``.
public struct TokenClosure: TokenProvider {
    let body: @Sendable (_ refresh: Bool) async throws -> AccessToken?

    public init(_ body: @escaping @Sendable (_ refresh: Bool) async throws -> AccessToken?) { self.body = body }

    public func token(refresh: Bool) async throws -> AccessToken? { try await body(refresh) }
}

extension FerryAuth {
    /// Ferry's own users as a ``TokenProvider``: signs in with a name and
    /// password (`POST /v1/auth/token`), keeps the token with its expiry, and
    /// signs in again when the engine asks for a new one.
    public actor PasswordSession: TokenProvider {
        let transport: any Transport
        let name: String
        let password: String
        var current: AccessToken?
        /// The signed-in user's id, once ``signIn()`` or a token request succeeded.
        public private(set) var userID: String?

        public init(transport: any Transport, name: String, password: String) {
            (self.transport, self.name, self.password) = (transport, name, password)
        }

        /// Signs in now (to learn the user's id, which names the store's file).
        @discardableResult
        public func signIn() async throws -> String {
            let (token, user, expiresAt) = try await FerryAuth.session(transport: transport, name: name, password: password)
            current = AccessToken(token, expiresAt: expiresAt)
            userID = user
            return user
        }

        public func token(refresh: Bool) async throws -> AccessToken? {
            if refresh || current == nil { try await signIn() }
            return current
        }
    }
}
