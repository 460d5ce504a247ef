import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// Whether a write changes a value, for types whose `=` does not say it: `point`
    /// and `xml` have no `=` at all (every create of such a table answered 500, and so
    /// did a filter on the column, now refused as json's is), and `box`'s compares areas (a PATCH to another box
    /// of the same area changed nothing). They are compared as their text.
    @Suite struct ValueComparisonTests {
        @Test func aWriteSeesEveryChangeOfAValueWhateverItsType() throws {
            let me = try ResourceFixture.own(
                schema: """
                    CREATE TABLE app.plots (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), spot point, area box, doc xml, label text, meta json);
                    SELECT ferry.enable_sync('app.plots');
                    GRANT SELECT, INSERT, UPDATE ON app.plots TO ferry_app;
                    """, user: "plot_user")
            defer { me.server.stop() }

            let fields: [String: Any] = ["spot": "(1,2)", "area": "(2,2),(0,0)", "doc": "<a/>", "label": "first", "meta": ["a": 1]]
            let created = try me.call("POST", "/v1/plots", json: fields)
            #expect(created.status == 201, "\(created.text)")
            var retry = fields
            retry["id"] = created.object.id
            let again = try me.call("POST", "/v1/plots", json: retry)
            #expect(again.status == 200, "the same create again is its retry: \(again.text)")
            retry["spot"] = "(5,5)"
            let other = try me.call("POST", "/v1/plots", json: retry)
            #expect(other.status == 409, "another create with its id: \(other.text)")

            let path = "/v1/plots/\(created.object.id)"
            let star = [("If-Match", "*")]
            let same = try me.call("PATCH", path, json: ["spot": "(1,2)", "doc": "<a/>"], headers: star)
            #expect(same.status == 200 && same.object.revision == 1, "nothing changed: \(same.text)")
            let sameArea = try me.call("PATCH", path, json: ["area": "(1,4),(0,0)"], headers: star)
            #expect(sameArea.status == 200 && sameArea.object.revision == 2, "another box of the same area: \(sameArea.text)")
            let moved = try me.call("PATCH", path, json: ["spot": "(3,4)", "doc": "<b/>"], headers: star)
            #expect(moved.status == 200 && moved.object.revision == 3, "\(moved.text)")
            #expect(moved.object["spot"] as? String == "(3,4)" && moved.object["doc"] as? String == "<b/>", "\(moved.text)")
            // The full plan (a base revision) and a bulk update compare the same way.
            let full = try me.call("PATCH", path, json: ["spot": "(3,4)", "revision": 3])
            #expect(full.status == 200 && full.object.revision == 3, "\(full.text)")
            let bulk = try me.call("PATCH", "/v1/plots", json: [["id": created.object.id, "revision": 3, "spot": "(9,9)"]])
            #expect(bulk.status == 200 && bulk.array.first?.revision == 4, "\(bulk.text)")

            // Such a column cannot be filtered on, as json cannot: a clear 400, not a 500.
            for query in ["doc=%3Cb/%3E", "spot=3", "meta=1"] {
                let filtered = try me.call("GET", "/v1/plots?\(query)")
                #expect(filtered.status == 400, "\(query): \(filtered.text)")
                #expect((filtered.object["detail"] as? String)?.hasPrefix("cannot filter on") == true, "\(query): \(filtered.text)")
            }
        }

        /// A body may echo its row's id in any spelling PostgreSQL calls the same id: a
        /// `citext` id in another case is the path's row, not an `id_mismatch`.
        @Test func aCitextIDEchoedInAnotherCaseIsTheSameRow() throws {
            let me = try ResourceFixture.own(
                schema: """
                    CREATE EXTENSION IF NOT EXISTS citext;
                    CREATE TABLE app.handles (id citext PRIMARY KEY, note text);
                    SELECT ferry.enable_sync('app.handles');
                    GRANT SELECT, INSERT, UPDATE ON app.handles TO ferry_app;
                    """, user: "handle_user")
            defer { me.server.stop() }
            let created = try me.call("POST", "/v1/handles", json: ["id": "Alice", "note": "a"])
            #expect(created.status == 201, "\(created.text)")
            let star = [("If-Match", "*")]
            let echoed = try me.call("PATCH", "/v1/handles/Alice", json: ["id": "ALICE", "note": "b"], headers: star)
            #expect(echoed.status == 200, "\(echoed.text)")
            let other = try me.call("PATCH", "/v1/handles/Alice", json: ["id": "Bob", "note": "c"], headers: star)
            #expect(other.status == 422 && other.text.contains("id_mismatch"), "\(other.text)")
        }

        /// A `character(n)` id ignores trailing blanks, as PostgreSQL compares it: a body that
        /// echoes the row as read back (padded) names the path's row.
        @Test func aPaddedCharacterIDEchoedIsTheSameRow() throws {
            let me = try ResourceFixture.own(
                schema: """
                    CREATE TABLE app.codes (id character(6) PRIMARY KEY, note text);
                    SELECT ferry.enable_sync('app.codes');
                    GRANT SELECT, INSERT, UPDATE ON app.codes TO ferry_app;
                    """, user: "code_user")
            defer { me.server.stop() }
            let created = try me.call("POST", "/v1/codes", json: ["id": "ab", "note": "a"])
            #expect(created.status == 201, "\(created.text)")
            let read = try me.call("GET", "/v1/codes/ab")
            #expect(read.status == 200 && read.object["id"] as? String == "ab    ", "\(read.text)")
            let star = [("If-Match", "*")]
            let echoed = try me.call("PATCH", "/v1/codes/ab", json: ["id": "ab    ", "note": "b"], headers: star)
            #expect(echoed.status == 200, "\(echoed.text)")
            let other = try me.call("PATCH", "/v1/codes/ab", json: ["id": "abc", "note": "c"], headers: star)
            #expect(other.status == 422 && other.text.contains("id_mismatch"), "\(other.text)")
        }

        /// An array of a type with a modifier (`varchar(8)[]`, `numeric(6,2)[]`) takes JSON
        /// arrays: it was typed as its element, and every array was `wrong_type`.
        @Test func anArrayOfATypeWithAModifierTakesArrays() throws {
            let me = try ResourceFixture.own(
                schema: """
                    CREATE TABLE app.tagged (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), tags varchar(8)[], amounts numeric(6,2)[]);
                    SELECT ferry.enable_sync('app.tagged');
                    GRANT SELECT, INSERT, UPDATE ON app.tagged TO ferry_app;
                    """, user: "tag_user")
            defer { me.server.stop() }
            let created = try me.call("POST", "/v1/tagged", json: ["tags": ["a", "bb"], "amounts": [1.5, 2]])
            #expect(created.status == 201, "\(created.text)")
            #expect(created.object["tags"] as? [String] == ["a", "bb"], "\(created.text)")
            let scalar = try me.call("POST", "/v1/tagged", json: ["tags": "a"])
            #expect(scalar.status == 422 && scalar.errors.first?["reason"] as? String == "wrong_type", "\(scalar.text)")
        }

        /// A type whose `=` is looser than what a client reads back: `citext` ignores case,
        /// an interval calls `1 day` and `24:00:00` equal. A PATCH that changed only a
        /// name's case answered 200 with the old name and wrote nothing, and a create's
        /// retry with another case was taken for the same create. Compared as JSON now.
        @Test func aChangeOfCaseInACitextIsAChange() throws {
            let me = try ResourceFixture.own(
                schema: """
                    CREATE EXTENSION IF NOT EXISTS citext;
                    CREATE TABLE app.people (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), name citext, names citext[],
                                             span interval, amount numeric);
                    SELECT ferry.enable_sync('app.people');
                    GRANT SELECT, INSERT, UPDATE ON app.people TO ferry_app;
                    """, user: "citext_user")
            defer { me.server.stop() }

            let fields: [String: Any] = ["name": "Alice", "names": ["Alice"], "span": "1 day", "amount": 1.5]
            let created = try me.call("POST", "/v1/people", json: fields)
            #expect(created.status == 201, "\(created.text)")
            var retry = fields
            retry["id"] = created.object.id
            #expect(try me.call("POST", "/v1/people", json: retry).status == 200, "the same create again is its retry")
            retry["name"] = "ALICE"
            let other = try me.call("POST", "/v1/people", json: retry)
            #expect(other.status == 409, "another create with its id, only the case differs: \(other.text)")

            let path = "/v1/people/\(created.object.id)"
            let fast = try me.call("PATCH", path, json: ["name": "alice"], headers: [("If-Match", "*")])
            #expect(fast.status == 200 && fast.object.revision == 2 && fast.object["name"] as? String == "alice", "\(fast.text)")
            let full = try me.call("PATCH", path, json: ["name": "aLICE", "names": ["alice"], "revision": 2])
            #expect(full.status == 200 && full.object.revision == 3, "\(full.text)")
            #expect(full.object["name"] as? String == "aLICE" && full.object["names"] as? [String] == ["alice"], "\(full.text)")
            let span = try me.call("PATCH", path, json: ["span": "24:00:00"], headers: [("If-Match", "*")])
            #expect(span.status == 200 && span.object.revision == 4, "\(span.text)")
            let bulk = try me.call("PATCH", "/v1/people", json: [["id": created.object.id, "revision": 4, "name": "Alice"]])
            #expect(bulk.status == 200 && bulk.array.first?.revision == 5 && bulk.array.first?["name"] as? String == "Alice", "\(bulk.text)")
            // A stale base: the field changed since, and the value differs only in case: a conflict.
            let stale = try me.call("PATCH", path, json: ["name": "ALICE", "revision": 1])
            #expect(stale.status == 409, "\(stale.text)")
            // The same JSON number is no change; the same name is none either.
            let same = try me.call("PATCH", path, json: ["amount": 1.50, "name": "Alice"], headers: [("If-Match", "*")])
            #expect(same.status == 200 && same.object.revision == 5, "\(same.text)")
            #expect(try me.call("GET", path).object["name"] as? String == "Alice")
        }
    }
}
