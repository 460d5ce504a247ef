@testable import FerryKit
import Foundation
import Testing
@testable import FerryKitTestSupport

/// A public API that changes keeps its old form, deprecated, for at least one
/// release (CHANGELOG.md). An app written against 0.1.0's
/// `SyncEngine(store:transport:token:maxBulk:)` stopped compiling when `tokens:`
/// replaced it (issue 48); the form is back and forwards to `FixedToken`.
@Suite struct DeprecatedFormsTests {
    @Test func theTokenAndMaxBulkInitializerForwardsToAFixedToken() async throws {
        let store = try FerryStore(path: ":memory:")
        let engine = (OldForms() as any OldFormsCalling).engine(store: store, transport: ScriptedTransport(), token: "t1", maxBulk: 7)
        #expect(await engine.maxBulk == 7)
        let tokens = await engine.tokens
        #expect(try await tokens.token(refresh: false) == AccessToken("t1"))
        #expect(try await tokens.token(refresh: true) == nil, "a fixed token: a 401 pauses sync, as before")
    }
}

/// Reaches the deprecated forms through a requirement that is not deprecated, so
/// that this test calls them without the warning an app sees (the build has none).
protocol OldFormsCalling {
    func engine(store: FerryStore, transport: any Transport, token: String, maxBulk: Int) -> SyncEngine
}

struct OldForms: OldFormsCalling {
    @available(*, deprecated)
    func engine(store: FerryStore, transport: any Transport, token: String, maxBulk: Int) -> SyncEngine {
        SyncEngine(store: store, transport: transport, token: token, maxBulk: maxBulk)
    }
}
