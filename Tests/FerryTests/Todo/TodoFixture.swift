import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Synchronization
import Testing

/// The to-do example (examples/todo) served by one Ferry shared by its suites, as
/// `ResourceFixture` serves the study app; tests isolate themselves by making their
/// own users. `swift test --filter Todo` selects them all.
enum Todo {}

enum TodoFixture {
    private static let shared = Mutex<Result<TestServer, any Error>?>(nil)

    static func server() throws -> TestServer {
        try shared.withLock { state in
            if let state { return try state.get() }
            let result = Result { try TestServer(database: try ScratchDatabase(prefix: "ferry_todo", app: .todo)) }
            state = result
            if case .success = result { atexit { TodoFixture.stop() } }
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
    static func user(_ prefix: String) throws -> API {
        let server = try server()
        let name = prefix + "_" + UUID().uuidString.prefix(8).lowercased()
        let (id, token) = try server.user(name)
        return API(client: server.client(), token: token, userID: id, server: server)
    }

    /// A transaction id every write committed so far is below: the feed has delivered
    /// them all once its frontier passes it.
    static func xid() throws -> UInt64 {
        UInt64(try server().ownerQuery("SELECT pg_current_xact_id()::text").rows[0][0] ?? "0") ?? 0
    }
}

extension API {
    /// Posts `json` to `/v1/<resource>` and returns the created row.
    func create(_ resource: String, _ json: [String: Any]) throws -> [String: Any] {
        let response = try call("POST", "/v1/\(resource)", json: json)
        #expect(response.status == 201, "POST \(resource): \(response.text)")
        return response.object
    }

    /// Makes `user` a member of `list`; returns the member row.
    func share(_ list: String, with user: API) throws -> [String: Any] {
        try create("list_members", ["list_id": list, "user_id": user.userID])
    }
}
