@testable import Ferry
import FerryTestSupport
import Foundation
import Testing

/// docs/API.md is the contract: every problem code the OpenAPI document
/// lists (the server's refusals and the JWT sign-in's) is named there.
@Suite struct ProblemCodesDocumentedTests {
    @Test func everyProblemCodeIsInAPIMd() throws {
        let contract = try String(contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/API.md"), encoding: .utf8)
        let missing = (OpenAPIDocument.problemCodes + OpenAPIDocument.jwtProblemCodes).filter { !contract.contains("`\($0)`") }
        #expect(missing.isEmpty, "docs/API.md does not name \(missing)")
    }
}
