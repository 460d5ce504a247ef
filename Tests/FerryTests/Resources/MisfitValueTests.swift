import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// A value of the right JSON kind that its column's type still refuses: an enum
    /// label the type lacks, a string too long for a `varchar(n)`, a number past a
    /// `numeric(p, s)`'s precision, a date that is none. PostgreSQL's error names no
    /// column for these, so until now the 422 said `field: null`, and a client could
    /// not tell its user which input to fix. Now it names the field, in a single
    /// create, both update paths and a bulk write.
    @Suite struct MisfitValueTests {
        static let schema = """
            CREATE TYPE app.mood AS ENUM ('calm', 'busy');
            CREATE TABLE app.moods (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                                    mood app.mood NOT NULL DEFAULT 'calm',
                                    code character varying(4),
                                    price numeric(6, 2),
                                    due date);
            SELECT ferry.enable_sync('app.moods');
            GRANT SELECT, INSERT, UPDATE ON app.moods TO ferry_app;
            """

        @Test func aValueItsColumnRefusesNamesTheField() throws {
            let me = try ResourceFixture.own(schema: Self.schema, user: "misfit_user")
            defer { me.server.stop() }

            let row = try me.call("POST", "/v1/moods", json: ["mood": "busy", "code": "AB", "price": 12.5, "due": "2026-12-24"])
            #expect(row.status == 201, "\(row.text)")
            let path = "/v1/moods/\(row.object.id)"
            let misfits: [(String, Any)] = [("mood", "sad"), ("code", "ABCDE"), ("price", 123_456), ("due", "2026-13-45")]
            for (field, value) in misfits {
                let create = try me.call("POST", "/v1/moods", json: [field: value])
                #expect(create.status == 422, "\(field): \(create.text)")
                #expect(create.errors.first?["field"] as? String == field, "\(field): \(create.text)")
                #expect(create.errors.first?["reason"] as? String == "invalid_value", "\(field): \(create.text)")
                let patch = try me.call("PATCH", path, json: [field: value], headers: [("If-Match", "*")])
                #expect(patch.status == 422 && patch.errors.first?["field"] as? String == field, "\(field): \(patch.text)")
                let full = try me.call("PATCH", path, json: [field: value, "revision": 1])
                #expect(full.status == 422 && full.errors.first?["field"] as? String == field, "\(field): \(full.text)")
                let bulk = try me.call("POST", "/v1/moods", json: [["mood": "calm"], [field: value]])
                #expect(bulk.status == 422, "\(field): \(bulk.text)")
                let second = bulk.errors.filter { $0["index"] as? Int == 1 }
                #expect(second.map { $0["field"] as? String } == [field], "\(field): \(bulk.text)")
            }
            // Inside a batch's transaction and an idempotent write's (both still open when
            // the write fails): the field was null there, the question joining the
            // aborted transaction.
            for (field, value) in misfits {
                let batch = try me.call(
                    "POST", "/v1/batch",
                    json: [
                        "operations": [
                            ["method": "PATCH", "path": path, "headers": ["If-Match": "*"], "body": ["code": "OK"]],
                            ["method": "POST", "path": "/v1/moods", "body": [field: value]],
                        ]
                    ])
                #expect(batch.status == 422, "\(field): \(batch.text)")
                #expect(batch.object["operation_index"] as? Int == 1, "\(field): \(batch.text)")
                #expect(batch.errors.first?["field"] as? String == field, "\(field): \(batch.text)")
                let keyed = try me.call(
                    "PATCH", path, json: [field: value], headers: [("If-Match", "*"), ("Idempotency-Key", "misfit-\(field)")])
                #expect(keyed.status == 422 && keyed.errors.first?["field"] as? String == field, "\(field): \(keyed.text)")
            }
            // Two misfits in one bulk item name both.
            let both = try me.call("POST", "/v1/moods", json: [["mood": "calm"], ["mood": "sad", "code": "TOOLONG"]])
            #expect(Set(both.errors.compactMap { $0["field"] as? String }) == ["mood", "code"], "\(both.text)")
            #expect(try me.call("GET", path).object.revision == 1, "nothing was written")
        }

        /// A batch holds a pooled connection while it asks which field misfit. With every
        /// other slot in use (here: the pool is one connection), the question waited out the
        /// acquire timeout for a second one, and batches doing this on every connection
        /// held the whole pool meanwhile: now it takes a free connection or none. The 422
        /// comes either way; the field is named when a connection was free.
        @Test func aBatchAsksWithoutWaitingForASecondConnection() throws {
            let me = try ResourceFixture.own(schema: Self.schema, user: "misfit_pool") {
                $0.database.poolSize = 1
                $0.database.acquireTimeoutMs = 10_000
            }
            defer { me.server.stop() }
            let row = try me.call("POST", "/v1/moods", json: ["mood": "busy"])
            #expect(row.status == 201, "\(row.text)")
            let batch = try me.call(
                "POST", "/v1/batch",
                json: [
                    "operations": [
                        ["method": "PATCH", "path": "/v1/moods/\(row.object.id)", "headers": ["If-Match": "*"], "body": ["code": "OK"]],
                        ["method": "POST", "path": "/v1/moods", "body": ["mood": "sad"]],
                    ]
                ])
            #expect(batch.status == 422, "\(batch.text)")
            #expect(batch.object["operation_index"] as? Int == 1, "\(batch.text)")
            let stats = me.server.app.pool.stats
            #expect(stats.acquireTimeouts == 0, "the question waited for a second connection: \(stats)")
            #expect(try me.call("GET", "/v1/moods/\(row.object.id)").object.revision == 1, "the batch wrote nothing")
        }
    }
}
