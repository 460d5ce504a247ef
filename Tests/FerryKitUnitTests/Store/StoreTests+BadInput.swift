@testable import FerryKit
import Foundation
import GRDB
import Testing
@testable import FerryKitTestSupport

/// Issue 35's bad input, through the dictionary calls and records: each is
/// refused with an error that names the cause, and leaves the store and its
/// outbox exactly as they were.
extension StoreTests {
    /// Every table of the store, as text: what "as they were" compares.
    static func contents(_ store: FerryStore) throws -> String {
        try store.database.read { db in
            var out = ""
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") {
                out += "\(table): " + (try Row.fetchAll(db, sql: "SELECT * FROM \(LocalSchema.quote(table)) ORDER BY rowid")).description + "\n"
            }
            return out
        }
    }

    func scoredStore() throws -> (FerryStore, set: String) {
        let store = try FerryStore(path: ":memory:")
        try store.apply(schema: ExampleSchema.withScores)
        let set = try store.create("study_sets", ["title": .string("kept")])
        try store.create("terms", ["set_id": .string(set), "word": .string("hola"), "rank": .string("U")])
        return (store, set)
    }

    /// Runs `write`, which must throw `expected`, and checks that nothing changed.
    func refuses(
        _ store: FerryStore, _ expected: FerryKitError, _ write: () throws -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let before = try Self.contents(store)
        #expect(throws: expected, sourceLocation: sourceLocation) { try write() }
        #expect(try Self.contents(store) == before, "the store changed", sourceLocation: sourceLocation)
    }

    @Test func anUnknownColumnIsRefusedThroughTheDictionaryCallsAndRecords() throws {
        let (store, set) = try scoredStore()
        let known = ExampleSchema.studySets.columns.map(\.name)
        try refuses(store, .unknownColumn(resource: "study_sets", column: "no_such_column", known: known)) {
            try store.create("study_sets", ["no_such_column": .string("x"), "title": .string("t")])
        }
        try refuses(store, .unknownColumn(resource: "study_sets", column: "no_such_column", known: known)) {
            try store.update("study_sets", id: set, ["no_such_column": .string("x")])
        }
        try refuses(
            store,
            .recordMismatch(
                record: "SetWithTypo", resource: "study_sets",
                problem:
                    "its property \"titel\" is not a column of study_sets (columns: \(known.joined(separator: ", ")))")
        ) {
            try store.insert(SetWithTypo(titel: "t"))
        }
        // Reading is checked the same way: an optional misspelt property would otherwise read nil for ever.
        #expect(throws: FerryKitError.self) { try store.fetch(SetWithTypo.self) }
    }

    @Test func aRecordOfAResourceTheServerDoesNotHaveIsRefused() throws {
        let (store, _) = try scoredStore()
        try refuses(
            store,
            .recordMismatch(
                record: "Note", resource: "notes",
                problem: "the server has no such resource (or the store has not synced its schema yet)")
        ) {
            try store.insert(Note(body: "b"))
        }
        #expect(
            throws: FerryKitError.recordMismatch(
                record: "Note", resource: "notes",
                problem: "the server has no such resource (or the store has not synced its schema yet)")
        ) {
            try store.fetch(Note.self)
        }
        try refuses(store, .unknownResource("notes")) { try store.create("notes", ["body": .string("b")]) }
    }

    @Test func aValueOfTheWrongTypeIsRefused() throws {
        let (store, _) = try scoredStore()
        try refuses(store, .typeMismatch(resource: "scores", column: "points", expected: "integer", got: "the string \"ten\"")) {
            try store.create("scores", ["player": .string("p"), "points": .string("ten")])
        }
        try refuses(
            store,
            .recordMismatch(
                record: "ScoreWithTextPoints", resource: "scores",
                problem: "its property \"points\" is text (String), but scores.points is integer on the server")
        ) {
            try store.insert(ScoreWithTextPoints(player: "p", points: "ten"))
        }
    }

    @Test func aMissingRequiredColumnIsRefused() throws {
        let (store, _) = try scoredStore()
        try refuses(store, .missingValue(resource: "study_sets", column: "title")) { try store.create("study_sets", ["description": .string("d")]) }
        try refuses(
            store,
            .recordMismatch(
                record: "UntitledSet", resource: "study_sets",
                problem: "study_sets.title must be set when a row is created, and it has no property for it")
        ) {
            try store.insert(UntitledSet(description: "d"))
        }
    }

    @Test func aChangeToAReadOnlyColumnIsRefused() throws {
        let (store, set) = try scoredStore()
        _ = try store.applyPage(
            [
                (
                    "terms",
                    [
                        "id": .string("00000000-0000-4000-8000-00000000000a"), "set_id": .string(set),
                        "word": .string("synced"), "rank": .string("V"), "revision": .int(1),
                    ]
                )
            ], cursor: nil
        ) { _ in nil }
        try refuses(store, .readOnlyColumn(resource: "terms", column: "set_id")) {
            try store.update("terms", id: "00000000-0000-4000-8000-00000000000a", ["set_id": .string("00000000-0000-4000-8000-00000000000b")])
        }
        try refuses(store, .readOnlyColumn(resource: "study_sets", column: "revision")) {
            try store.update("study_sets", id: set, ["revision": .int(9)])
        }
        try refuses(
            store, .recordMismatch(record: "RankedSet", resource: "study_sets", problem: "it is a FerryRankedRecord, but study_sets has no ranks")
        ) {
            try store.insert(RankedSet(title: "t"))
        }
        try refuses(store, .notRanked("study_sets")) { try store.move("study_sets", id: set, after: nil) }
    }
}
