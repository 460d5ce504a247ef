@testable import Ferry
import Testing

/// Which rows of a default-stream window each user's own page would hold
/// (``DefaultWindow``), without I/O: the decision ``DefaultChecks`` shares
/// pages by. Every case where it cannot tell must say so (nil), never guess:
/// a user named by the access logs, or one who read a changed scope row
/// before and may have read it as its owner.
@Suite struct DefaultWindowTests {
    typealias Row = DefaultWindow.Row
    typealias Key = WaiterRegistry.ScopeKey

    /// study_sets: read by its owner, or by its collaborators (their scope ids);
    /// terms: read through their set.
    static let sets = ChangesPlan.WindowTable(
        name: "study_sets", qualifiedName: #""app"."study_sets""#,
        paths: [
            .init(column: "owner_id", keys: .caller),
            .init(column: "id", keys: .scopeIDs(function: "app._ferry_scope_ids_set_collaborators()")),
        ],
        columns: ["owner_id"], isScope: true)
    static let terms = ChangesPlan.WindowTable(
        name: "terms", qualifiedName: #""app"."terms""#, paths: [.init(column: "set_id", keys: .readable(table: "study_sets"))],
        columns: ["set_id"], isScope: false)

    /// A window of `terms` (each `[id, set_id]`) and changed sets (each `[id, owner_id]`), whose check ended at `endedAt`.
    static func window(
        terms: [[String]], sets: [[String]] = [], users: Set<String> = [], endedAt: ContinuousClock.Instant = .now
    ) -> DefaultWindow {
        let setRows = sets.map { Row(id: $0[0], values: [$0[1]]) }
        return DefaultWindow(
            tables: [
                .init(table: Self.terms, rows: terms.map { Row(id: $0[0], values: [$0[1]]) }, followed: true),
                .init(table: Self.sets, rows: setRows, followed: true),
            ],
            users: users, frontier: 100, changedScopes: ["study_sets": setRows], endedAt: endedAt)
    }

    @Test func aTermIsReadByTheReadersOfItsSetOnly() {
        let window = Self.window(terms: [["t1", "S"], ["t2", "T"]])
        let reader = window.readable(by: "ann", scopes: [Key(scope: "study_sets", id: "S")])
        #expect(reader?.rows == [0] && reader?.scopesHold == true)
        #expect(window.readable(by: "bob", scopes: [])?.rows == [])
        #expect(window.readable(by: "cat", scopes: [Key(scope: "study_sets", id: "S"), Key(scope: "study_sets", id: "T")])?.rows == [0, 1])
    }

    /// Granted or revoked since the cursor: what the user's page holds is the
    /// feed's to tell (grant rows, revoked stubs), never another's page.
    @Test func aUserTheAccessLogsNameCannotBeToldAndTakesNoPage() {
        let window = Self.window(terms: [["t1", "S"]], users: ["frank"])
        #expect(window.readable(by: "frank", scopes: [Key(scope: "study_sets", id: "S")]) == nil)
        #expect(window.readable(by: "frank", scopes: []) == nil)
        #expect(window.readable(by: "ann", scopes: [Key(scope: "study_sets", id: "S")])?.rows == [0])
    }

    /// A set written in the window: its owner reads it and its terms; one who
    /// read it before as a member still does (a member's access is the members
    /// table's, and the access logs do not name them); one who read it as its
    /// owner, whom the write may have moved, cannot be told; a stranger does
    /// not read it.
    @Test func aChangedSetIsReadByItsOwnerAndItsMembersAndUndecidedForItsFormerOwner() {
        let window = Self.window(terms: [["t1", "N"]], sets: [["N", "olga"]])
        let owner = window.readable(by: "olga", scopes: [])
        #expect(owner?.rows == [0, 1])
        #expect(owner?.scopesHold == false, "olga reads a scope row she did not read before")
        let n = Key(scope: "study_sets", id: "N")
        let member = window.readable(by: "kim", scopes: [n])
        #expect(member?.rows == [0, 1] && member?.scopesHold == true)
        #expect(window.readable(by: "kim", scopes: [n], owned: [n]) == nil, "kim read it as its owner: the write may have moved it")
        #expect(window.readable(by: "olga", scopes: [n], owned: [n])?.rows == [0, 1], "still hers")
        #expect(window.readable(by: "lee", scopes: [])?.rows == [])
    }
}
