import Foundation

/// Signing in to a Ferry server.
public enum FerryAuth {
    /// `POST /v1/auth/token` with the user's name and password; the token and the user's id.
    public static func signIn(transport: any Transport, name: String, password: String) async throws -> (token: String, userID: String) {
        let (token, user, _) = try await session(transport: transport, name: name, password: password)
        return (token, user)
    }

    /// ``signIn(transport:name:password:)`` with the token's expiry (`expires_at`).
    static func session(transport: any Transport, name: String, password: String) async throws
        -> (token: String, userID: String, expiresAt: Date?)
    {
        let credentials = Data("\(name):\(password)".utf8).base64EncodedString()
        let response = try await transport.send(
            TransportRequest(
                method: "POST", path: "/v1/auth/token",
                headers: ["Authorization": "Basic \(credentials)"]))
        guard response.status == 201, let token = response.object?["token"]?.string,
            let user = response.object?["user_id"]?.string
        else { throw FerryKitError.signInFailed(status: response.status) }
        let expiresAt = response.object?["expires_at"]?.int.map { Date(timeIntervalSince1970: Double($0) / 1_000) }
        return (token, user, expiresAt)
    }
}
