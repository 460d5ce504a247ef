import Ferry
import FerryPostgres

/// Helpers for tests that run Ferry as a subprocess rather than in-process.
public enum TestServerless {
    /// An owner-role connection to the scratch database; close it when done.
    public static func owner(_ database: ScratchDatabase) throws -> PostgresConnection {
        try PostgresConnection(url: database.ownerURL)
    }

    /// Creates a user and returns a bearer token for it.
    public static func token(_ owner: PostgresConnection, user: String, password: String = "correct-horse") throws -> String {
        _ = try owner.query("SELECT ferry.create_user(\(bind: user), \(bind: password))" as PostgresStatement)
        guard let issued = try AuthService.issueToken(name: user, ttlSeconds: 3600, connection: owner) else {
            throw TestEnvironment.Missing(description: "could not issue a token for \(user)")
        }
        return issued.token
    }
}
