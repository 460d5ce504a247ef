import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// One Ferry server shared by the resource suites (a TestServer costs about a
/// second). Tests isolate themselves by making their own users, so they may
/// run in parallel. The scratch database is dropped when the process exits.
/// Namespace of the resource suites, so `swift test --filter Resources` selects them all.
enum Resources {}

enum ResourceFixture {
    private static let shared = Mutex<Result<TestServer, any Error>?>(nil)

    static func server() throws -> TestServer {
        try shared.withLock { state in
            if let state { return try state.get() }
            let result = Result { try TestServer() }
            state = result
            if case .success = result { atexit { ResourceFixture.stop() } }
            return try result.get()
        }
    }

    private static func stop() {
        shared.withLock { state in
            if case .success(let server)? = state { server.stop() }
            state = nil
        }
    }

    /// A new user with a fresh connection.
    static func user(_ prefix: String = "u") throws -> API {
        let server = try server()
        let name = prefix + "_" + UUID().uuidString.prefix(8).lowercased()
        let (id, token) = try server.user(name)
        return API(client: server.client(), token: token, userID: id, server: server)
    }

    /// A server of its own over a scratch database with `schema` run in it as the owner
    /// (an app's own tables, for the suites that try a kind of column), and a user of it.
    /// The caller stops the server.
    static func own(
        schema: String, user: String, _ configure: @escaping (inout FerryConfiguration) -> Void = { _ in }
    ) throws -> API {
        let database = try ScratchDatabase()
        do {
            let owner = try database.connect()
            defer { owner.close() }
            try owner.execute(schema)
        } catch {
            database.drop()
            throw error
        }
        let server = try TestServer(database: database, configure)
        let (id, token) = try server.user(user)
        return API(client: server.client(), token: token, userID: id, server: server)
    }
}

/// A signed-in client.
struct API {
    let client: TestHTTPClient
    let token: String
    let userID: String
    let server: TestServer

    @discardableResult
    func call(
        _ method: String, _ path: String, json: Any? = nil, body: [UInt8]? = nil, headers: [(String, String)] = []
    ) throws -> TestHTTPClient.Response {
        var all = [("Authorization", "Bearer \(token)")] + headers
        if body != nil, !all.contains(where: { $0.0.lowercased() == "content-type" }) {
            all.append(("Content-Type", "application/json"))
        }
        return try client.request(method, path, headers: all, body: body, json: json)
    }

    /// Creates a study set and returns its JSON.
    func createSet(_ title: String = "Set", description: String = "") throws -> [String: Any] {
        let response = try call("POST", "/v1/study_sets", json: ["title": title, "description": description])
        #expect(response.status == 201, "\(response.text)")
        return response.object
    }

    /// Creates a term in a set and returns its JSON.
    func createTerm(set: String, word: String = "w", definition: String = "d", rank: String = "U") throws -> [String: Any] {
        let response = try call("POST", "/v1/terms", json: ["set_id": set, "word": word, "definition": definition, "rank": rank])
        #expect(response.status == 201, "\(response.text)")
        return response.object
    }
}

extension TestHTTPClient.Response {
    /// The `errors` member of a problem.
    var errors: [[String: Any]] { object["errors"] as? [[String: Any]] ?? [] }
    /// The body as a JSON array of objects.
    var array: [[String: Any]] { json as? [[String: Any]] ?? [] }
    /// The problem's code.
    var code: String? { object["code"] as? String }
}

extension Dictionary where Key == String, Value == Any {
    var id: String { self["id"] as? String ?? "" }
    var revision: Int { self["revision"] as? Int ?? -1 }
}
