import FerryHTTPTestSupport
import FerryTestSupport
import Testing

/// The router-level test mode (``RouterTestClient``) answers as the wire does,
/// for what it covers: the same statuses, fields Ferry sets, and bodies. What
/// it leaves out (framing, codings, the server's own fields, parking) is the
/// wire's, and its tests keep ``TestHTTPClient``.
@Suite struct RouterLevelTests {
    static let serverFields: Set<String> = ["date", "server", "x-request-id", "content-length", "connection", "vary"]

    @Test func routerAndWireGiveTheSameAnswers() throws {
        let server = try TestServer()
        defer { server.stop() }
        let router = RouterTestClient(app: server.app)
        let me = try server.user("caller")
        let auth = ("Authorization", "Bearer \(me.token)")
        let set = "0b6f2c4e-3a52-4c1e-9a59-0d2f4c7b1e01"
        let created = try server.client().request("POST", "/v1/study_sets", headers: [auth], json: ["id": set, "title": "Verbs"])
        #expect(created.status == 201)
        let requests: [(String, String, [(String, String)])] = [
            ("GET", "/v1/study_sets/\(set)", [auth]),
            ("GET", "/v1/study_sets/\(set)", [auth, ("If-None-Match", #""1""#)]),
            ("HEAD", "/v1/study_sets/\(set)", [auth]),
            ("GET", "/v1/study_sets?title=Verbs&order=title", [auth]),
            ("GET", "/v1/study_sets?title=No%20such%20title", [auth]),
            ("GET", "/v1/study_sets/not-a-uuid", [auth]),
            ("GET", "/v1/nothing_here", [auth]),
            ("GET", "/v1/study_sets", []),
            ("PUT", "/v1/auth/me", [auth]),
            ("GET", "/healthz", []),
        ]
        for (method, target, headers) in requests {
            let wire = try server.client().request(method, target, headers: headers)
            let routed = try router.request(method, target, headers: headers)
            #expect(routed.status == wire.status, "\(method) \(target)")
            #expect(routed.body == wire.body, "\(method) \(target): \(routed.text) against \(wire.text)")
            let fields = { (response: TestHTTPClient.Response) in
                response.headers.filter { !Self.serverFields.contains($0.name.lowercased()) }.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
            }
            #expect(fields(routed) == fields(wire), "\(method) \(target)")
        }
    }

    @Test func aTargetIsSplitAsTheParserSplitsIt() throws {
        let split = try RouterTestClient.split("/v1/terms%20x?set_id=a%2Bb&word=hola+amigo&flag&=v")
        #expect(split.path == "/v1/terms x")
        #expect(split.rawQuery == "set_id=a%2Bb&word=hola+amigo&flag&=v")
        #expect(split.query.map(\.name) == ["set_id", "word", "flag", ""])
        #expect(split.query.map(\.value) == ["a+b", "hola amigo", "", "v"])
        #expect(try RouterTestClient.split("/healthz").rawQuery == nil)
    }
}
