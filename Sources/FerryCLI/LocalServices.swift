import Foundation

/// The services `deploy/local.sh start` runs, as `ferry init` writes them into a new
/// app's ferry.json: the same variables, the same defaults, so a reader who started
/// them (on moved ports or not) migrates with no further wiring (docs/GUIDE.md).
struct LocalServices {
    static let defaultPostgresPort = 54329
    static let defaultMemcachedPort = 11299

    var postgresPort: Int
    var memcachedPort: Int
    var ownerPassword: String
    var appPassword: String

    init(environment: [String: String]) throws {
        postgresPort = try Self.port(environment, "FERRY_PG_PORT", default: Self.defaultPostgresPort)
        memcachedPort = try Self.port(environment, "FERRY_MC_PORT", default: Self.defaultMemcachedPort)
        ownerPassword = environment["FERRY_OWNER_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 } ?? "ferry_owner"
        appPassword = environment["FERRY_APP_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 } ?? "ferry_app"
    }

    /// The scaffold's placeholders and their values; passwords percent-encoded, which
    /// also keeps them valid inside a JSON string.
    func placeholders(dir: String) -> [(String, String)] {
        let encode = Self.inURL
        return [
            ("{{DIR}}", dir),
            ("{{PG_PORT}}", String(postgresPort)),
            ("{{MC_PORT}}", String(memcachedPort)),
            ("{{OWNER_PASSWORD}}", encode(ownerPassword)),
            ("{{APP_PASSWORD}}", encode(appPassword)),
        ]
    }

    /// `password` as a URL's userinfo holds it: RFC 3986's unreserved characters stay as
    /// they are; everything else is escaped.
    static func inURL(_ password: String) -> String {
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return password.addingPercentEncoding(withAllowedCharacters: unreserved) ?? password
    }

    private static func port(_ environment: [String: String], _ name: String, default value: Int) throws -> Int {
        guard let text = environment[name], !text.isEmpty else { return value }
        guard let port = Int(text), (1...65535).contains(port) else {
            throw CLIError("\(name) is \"\(text)\", not a port (1-65535); it names the port deploy/local.sh serves on")
        }
        return port
    }
}
