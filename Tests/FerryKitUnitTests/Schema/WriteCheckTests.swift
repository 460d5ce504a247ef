@testable import FerryKit
import Testing
@testable import FerryKitTestSupport

/// Whether a write fits its resource, without a database.
@Suite struct WriteCheckTests {
    let sets = ExampleSchema.studySets, terms = ExampleSchema.terms, scores = ExampleSchema.scores

    @Test func aCreateMayOnlyNameColumnsOfTheResource() {
        #expect(throws: FerryKitError.unknownColumn(resource: "study_sets", column: "no_such_column", known: sets.columns.map(\.name))) {
            try WriteCheck.create(["no_such_column": .string("x"), "title": .string("t")], sets)
        }
        #expect(throws: Never.self) { try WriteCheck.create(["title": .string("t"), "description": .null], sets) }
    }

    @Test func eachValueMustFitItsColumnsType() {
        #expect(throws: FerryKitError.typeMismatch(resource: "scores", column: "points", expected: "integer", got: "the string \"ten\"")) {
            try WriteCheck.create(["player": .string("p"), "points": .string("ten")], scores)
        }
        #expect(throws: FerryKitError.typeMismatch(resource: "scores", column: "points", expected: "integer", got: "the number 1.5")) {
            try WriteCheck.create(["player": .string("p"), "points": .double(1.5)], scores)
        }
        #expect(throws: FerryKitError.typeMismatch(resource: "scores", column: "points", expected: "integer", got: "the integer 4294967296")) {
            try WriteCheck.create(["player": .string("p"), "points": .int(1 << 32)], scores)
        }
        #expect(throws: FerryKitError.typeMismatch(resource: "terms", column: "set_id", expected: "uuid", got: "the string \"set-1\"")) {
            try WriteCheck.create(["set_id": .string("set-1")], terms)
        }
        #expect(throws: FerryKitError.typeMismatch(resource: "scores", column: "final", expected: "boolean", got: "the integer 1")) {
            try WriteCheck.create(["player": .string("p"), "points": .int(1), "final": .int(1)], scores)
        }
        #expect(throws: Never.self) {
            try WriteCheck.create(
                [
                    "player": .string("p"), "points": .double(3), "final": .bool(true), "tags": .array([.string("a")]),
                    "extra": .object(["any": .array([])]),
                ], scores)
        }
    }

    /// Typed as the server types them: an array of a type with a modifier is an array,
    /// a `citext` of another schema is text.
    @Test func columnTypesAreReadAsTheServerReadsThem() {
        #expect(ColumnType("character varying(8)[]") == .array)
        #expect(ColumnType("numeric(6,2)[]") == .array)
        #expect(ColumnType("character varying(8)") == .text)
        #expect(ColumnType("extensions.citext") == .text)
        #expect(ColumnType("numeric(6,2)") == .number)
    }

    @Test func aCreateMustSetWhatTheServerRequiresANullCountingAsLeftOut() {
        #expect(throws: FerryKitError.missingValue(resource: "study_sets", column: "title")) {
            try WriteCheck.create(["description": .string("d")], sets)
        }
        #expect(throws: FerryKitError.missingValue(resource: "study_sets", column: "title")) { try WriteCheck.create(["title": .null], sets) }
        // creator_id is required on the server too, but it has a default: the caller.
        #expect(throws: Never.self) { try WriteCheck.create(["title": .string("t")], sets) }
    }

    @Test func aCreateMayNotSetWhatTheServerOwns() {
        #expect(throws: FerryKitError.readOnlyColumn(resource: "study_sets", column: "revision")) {
            try WriteCheck.create(["title": .string("t"), "revision": .int(3)], sets)
        }
    }

    @Test func anUpdateChangesOnlyWhatDiffersAndMayEchoTheWholeRow() throws {
        let current: RowData = [
            "id": .string("s"), "title": .string("t"), "description": .string("d"), "revision": .int(2),
            "last_modified": .int(5), "is_deleted": .bool(false),
        ]
        var echoed = current
        echoed["title"] = .string("new")
        #expect(try WriteCheck.update(echoed, current: current, sets) == ["title"])
        #expect(try WriteCheck.update(current, current: current, sets).isEmpty)
        #expect(throws: FerryKitError.readOnlyColumn(resource: "study_sets", column: "revision")) {
            try WriteCheck.update(["revision": .int(3)], current: current, sets)
        }
        #expect(throws: FerryKitError.missingValue(resource: "study_sets", column: "title")) {
            try WriteCheck.update(["title": .null], current: current, sets)
        }
    }

    @Test func aColumnSetAtCreationChangesOnlyUntilTheServerHasTheRow() throws {
        let local: RowData = ["id": .string("t"), "set_id": .string("00000000-0000-4000-8000-000000000001")]
        let other = JSONValue.string("00000000-0000-4000-8000-000000000002")
        #expect(try WriteCheck.update(["set_id": other], current: local, terms) == ["set_id"])
        var synced = local
        synced["revision"] = .int(1)
        #expect(throws: FerryKitError.readOnlyColumn(resource: "terms", column: "set_id")) {
            try WriteCheck.update(["set_id": other], current: synced, terms)
        }
    }

    @Test func errorsNameWhatIsWrong() {
        let unknown = FerryKitError.unknownColumn(resource: "study_sets", column: "no_such_column", known: ["id", "title"])
        #expect(unknown.description == "study_sets has no column \"no_such_column\"; its columns are id, title")
        #expect(
            FerryKitError.typeMismatch(resource: "scores", column: "points", expected: "integer", got: "the string \"ten\"").description
                == "scores.points is integer on the server; the string \"ten\" does not fit it")
    }
}
