import Foundation
import Testing
import FerryTestSupport

/// `ferry operator add` and `list`, run as real subprocesses: the password
/// comes from standard input, as `ferry user add`'s does, and signs in to the
/// console.
@Suite struct OperatorCommandTests {
    @Test func operatorAddReadsItsPasswordFromStandardInput() throws {
        let server = try TestServer()
        defer { server.stop() }
        let env = ["FERRY_DATABASE_MIGRATION_URL": server.database.ownerURL]
        let added = try FerryProcess.run(["operator", "add", "dana", "--role", "admin"], environment: env, input: "dana-password\n")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.contains("created operator dana (admin"))
        #expect(!added.stdout.contains("dana-password") && !added.stderr.contains("dana-password"))
        #expect(try FerryProcess.run(["operator", "list"], environment: env).stdout.contains("dana\tadmin"))

        let basic = "Basic " + Data("dana:dana-password".utf8).base64EncodedString()
        #expect(try server.client().request("POST", "/console/api/session", headers: [("Authorization", basic)]).status == 201)

        let noPassword = try FerryProcess.run(["operator", "add", "eli"], environment: env, input: "")
        #expect(noPassword.status != 0)
        #expect(noPassword.stderr.contains("no password"))
        #expect(try !FerryProcess.run(["operator", "list"], environment: env).stdout.contains("eli"))
    }
}
