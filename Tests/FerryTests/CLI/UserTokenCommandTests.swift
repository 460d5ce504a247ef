import Foundation
import Testing
import FerryTestSupport

/// `ferry user add` and `ferry token issue`, run as real subprocesses, and the
/// token they produce used over HTTP.
@Suite struct UserTokenCommandTests {
    @Test func userAddThenTokenIssueGivesAWorkingToken() throws {
        let server = try TestServer()
        defer { server.stop() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": server.database.ownerURL]
        let added = try FerryProcess.run(["user", "add", "ivy"], environment: env, input: "ivy-password\n")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("created user ivy"))
        #expect(!added.stdout.contains("ivy-password") && !added.stderr.contains("ivy-password"))

        let again = try FerryProcess.run(["user", "add", "ivy"], environment: env, input: "other-password\n")
        #expect(again.status != 0)
        #expect(again.stderr.contains("exists"))

        let issued = try FerryProcess.run(["token", "issue", "ivy"], environment: env)
        #expect(issued.status == 0, "\(issued.stderr)")
        let token = issued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let me = try server.client().request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(token)")])
        #expect(me.status == 200)
        #expect(me.object["name"] as? String == "ivy")

        // The password from standard input signs in too.
        let basic = "Basic " + Data("ivy:ivy-password".utf8).base64EncodedString()
        #expect(try server.client().request("POST", "/v1/auth/token", headers: [("Authorization", basic)]).status == 201)
    }

    @Test func failuresExitNonZeroWithAReason() throws {
        let server = try TestServer()
        defer { server.stop() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": server.database.ownerURL]
        let noPassword = try FerryProcess.run(["user", "add", "jo"], environment: env, input: "")
        #expect(noPassword.status != 0)
        #expect(noPassword.stderr.contains("no password"))
        let unknown = try FerryProcess.run(["token", "issue", "nobody"], environment: env)
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("no user named nobody"))
        // A lifetime of none or less: said so, not a database error nor "Missing value".
        for ttl in ["0", "-5"] {
            let refused = try FerryProcess.run(["token", "issue", "nobody", "--ttl", ttl], environment: env)
            #expect(refused.status == 64, "\(refused.stderr)")
            #expect(refused.stderr.contains("--ttl must be a positive number of seconds, not \(ttl)"), "\(refused.stderr)")
            let console = try FerryProcess.run(["operator", "token", "nobody", "--ttl", ttl], environment: env)
            #expect(console.status == 64 && console.stderr.contains("--ttl must be a positive number"), "\(console.stderr)")
        }
        let badConfig = try FerryProcess.run(["token", "issue", "jo"], environment: ["FERRY_LISTEN_PORT": "x"])
        #expect(badConfig.status == 78)
        #expect(badConfig.stderr.contains("FERRY_LISTEN_PORT"))
    }
}
