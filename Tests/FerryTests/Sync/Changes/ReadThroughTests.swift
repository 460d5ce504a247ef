@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// The feed read through the rules' read paths (core 0021) answers exactly
    /// what the walk of every change answers: the paths only choose where to
    /// look. Each user's polls from points between the writes, and their whole
    /// feed in small pages, are read both ways in one snapshot and compared
    /// row for row, after owned, shared, child, linked, deleted, granted and
    /// revoked rows of three users.
    @Suite struct ReadThroughTests {
        @Test func everyUsersFeedIsTheSameReadThroughThePathsAsWalked() throws {
            let server = try TestServer()
            defer { server.stop() }
            let ann = try server.user("ann"), bob = try server.user("bob"), cat = try server.user("cat")
            let catalog = server.app.schema.catalog
            let paths = try ReadPath.load(schema: "app", catalog: catalog, database: server.app.database)
            let scopes = try AccessScope.load(schema: "app", catalog: catalog, database: server.app.database)
            // Every table of the study app is under a rule, each with a path.
            let through = ReadThrough(catalog: catalog, readPaths: paths)
            for name in catalog.names { #expect(through.paths(name) != nil, "\(name) has no read path") }

            let checkpoints = try Self.write(server, ann: ann.id, bob: bob.id, cat: cat.id)
            // Before the sets are analyzed (no estimate of the table) a table read
            // through them takes its paths; after it, a user who may read two of
            // the four sets walks it (each of the three here, bob through the
            // class), and one who reads one would not: the plans that decide
            // beforehand take both ways for every user.
            let estimate = "SELECT reltuples FROM pg_class WHERE oid = 'app.study_sets'::regclass"
            #expect(Double(try server.ownerQuery(estimate).rows[0][0] ?? "") ?? 1 <= 0)
            try Self.compare(
                server, users: [ann.id, bob.id, cat.id], checkpoints: checkpoints,
                catalog: catalog, scopes: scopes, paths: paths)
            _ = try server.ownerQuery("ANALYZE app.study_sets")
            #expect(try server.ownerQuery(estimate).rows[0][0] == "4")
            try Self.compare(
                server, users: [ann.id, bob.id, cat.id], checkpoints: checkpoints,
                catalog: catalog, scopes: scopes, paths: paths)
        }

        /// Each user's feed in one snapshot through the paths always, through
        /// them unless the user may read most of a parent (decided in the
        /// statement), with every gated table walked or none (decided
        /// beforehand, as the server does, ``WalkDecisions``), and walked; each
        /// must answer as the walk.
        static func compare(
            _ server: TestServer, users: [String], checkpoints: [UInt64],
            catalog: SchemaCatalog, scopes: [AccessScope], paths: [ReadPath]
        ) throws {
            let resources = catalog.names.sorted(by: ChangeOrder.precedes)
            let parents = Set(catalog.names.flatMap(ReadThrough(catalog: catalog, readPaths: paths).gateParents))
            #expect(parents.contains("study_sets"), "terms are read through the sets: \(parents)")
            let ways = ["paths", "gated", "decided: walk all", "decided: walk none"]
            func plans(_ request: ChangesRequest) -> [ChangesPlan] {
                [
                    ChangesPlan(request: request, catalog: catalog, scopes: scopes, readPaths: paths, walks: .never),
                    ChangesPlan(request: request, catalog: catalog, scopes: scopes, readPaths: paths),
                    ChangesPlan(request: request, catalog: catalog, scopes: scopes, readPaths: paths, walks: .through(parents)),
                    ChangesPlan(request: request, catalog: catalog, scopes: scopes, readPaths: paths, walks: .through([])),
                    ChangesPlan(request: request, catalog: catalog, scopes: scopes),
                ]
            }
            for user in users {
                // A poll from each point between the writes (a frontier cursor:
                // the page reads through the paths), in a large page and a small one.
                for (index, xid) in checkpoints.enumerated() {
                    for limit in [1_000, 7, 3] {
                        let request = ChangesRequest(since: ChangeCursor(afterXID: xid), limit: limit, resources: resources)
                        let all = plans(request)
                        #expect(all[0].pagesThroughPaths)
                        let answers = try Self.allWays(server, all, userID: user)
                        for (way, answer) in zip(ways, answers) {
                            #expect(answer.page == answers[4].page, "\(way): poll after checkpoint \(index), limit \(limit), for \(user)")
                            #expect(answer.active == answers[4].active, "\(way): activity after checkpoint \(index), limit \(limit), for \(user)")
                        }
                    }
                }
                // The whole feed from the start in small pages (the first through
                // the paths, the rest after a position cursor: the walk), with the
                // activity check read through the paths.
                var cursor = ChangeCursor.start
                var pages = 0
                while true {
                    let request = ChangesRequest(since: cursor, limit: 7, resources: resources)
                    let answers = try Self.allWays(server, plans(request), userID: user)
                    for (way, answer) in zip(ways, answers) {
                        #expect(answer.page == answers[4].page, "\(way): page \(pages) for \(user)")
                        #expect(answer.active == answers[4].active, "\(way): activity at page \(pages) for \(user)")
                    }
                    let page = try ChangesPage(answers[0].result, request: request)
                    pages += 1
                    guard page.hasMore, pages < 200 else { break }
                    cursor = page.cursor
                }
                #expect(pages > 3, "the small pages paged")
            }
        }

        /// A permissive read policy of the app's own beside a rule's may let the
        /// caller read more than the rule says: that table, and the tables read
        /// through it, lose their paths and are walked as before.
        @Test func aPolicyBesideTheRuleTurnsThePathsOff() throws {
            let server = try TestServer()
            defer { server.stop() }
            let catalog = server.app.schema.catalog
            _ = try server.ownerQuery("CREATE POLICY everyone_reads ON app.folders FOR SELECT USING (true)")
            let paths = try ReadPath.load(schema: "app", catalog: catalog, database: server.app.database)
            let through = ReadThrough(catalog: catalog, readPaths: paths)
            #expect(paths.first { $0.table == "folders" }?.rulesOnly == false)
            #expect(through.paths("folders") == nil)
            #expect(through.paths("folder_sets") == nil, "a child of a table without paths has none")
            #expect(through.paths("terms") != nil)
        }

        /// A table read through a parent is gated by that parent; an owned
        /// table by its own rows (the owner of most of the sets walks them, as a
        /// hand-written table is walked); a decision made for every table
        /// covers both.
        @Test func anOwnedTableIsGatedByItsOwnRows() throws {
            let server = try TestServer()
            defer { server.stop() }
            let catalog = server.app.schema.catalog
            let through = ReadThrough(
                catalog: catalog,
                readPaths: try ReadPath.load(schema: "app", catalog: catalog, database: server.app.database))
            #expect(through.gateParents("study_sets") == ["study_sets"])
            #expect(through.gateParents("folders") == ["folders"])
            #expect(through.gateParents("terms") == ["study_sets"])
            // A class's member rows, read by the teacher through the classes they
            // own (a probe per class), walk with the classes (issue 46).
            #expect(through.gateParents("class_members") == ["classes"])
            let request = ChangesRequest(since: .start, limit: 10, resources: catalog.names.sorted(by: ChangeOrder.precedes))
            let plan = ChangesPlan(request: request, catalog: catalog, scopes: [], readThrough: through, walks: .through(["study_sets"]))
            #expect(plan.way("study_sets") == .walk && plan.way("terms") == .walk)
            #expect(plan.way("folders") == .paths && plan.way("folder_sets") == .paths)
            let decided = try #require(through.decision)
            // The study app's classes (examples/study 0020) are owned too: their own gate.
            #expect(Set(decided.parents) == ["study_sets", "folders", "classes"])
        }

        /// Three users' sets, terms, folders, collaborations and a class, changed
        /// over several transactions: shares granted and revoked, a student
        /// removed, rows deleted.
        /// Returns the highest xid after each step: the frontier cursors to poll from.
        static func write(_ server: TestServer, ann: String, bob: String, cat: String) throws -> [UInt64] {
            var checkpoints: [UInt64] = [max(1, try server.maxXID())]
            func set(_ owner: String, _ title: String, terms: Int) throws -> String {
                let id = try #require(
                    try server.ownerQuery(
                        "INSERT INTO app.study_sets (creator_id, title) VALUES ($1, $2) RETURNING id", [owner, title]
                    ).rows[0][0])
                _ = try server.ownerQuery(
                    """
                    INSERT INTO app.terms (set_id, word, definition, rank)
                    SELECT $1, $2 || ' ' || i, 'definition ' || i, 'r' || lpad(i::text, 3, '0') || 'V' FROM generate_series(1, $3) i
                    """, [id, title, String(terms)])
                return id
            }
            let shared = try set(ann, "ann shared", terms: 12)
            let secret = try set(ann, "ann secret", terms: 9)
            let bobs = try set(bob, "bob own", terms: 5)
            let cats = try set(cat, "cat shared", terms: 6)
            _ = try server.ownerQuery(
                "INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $2), ($3, $2), ($3, $4)",
                [shared, bob, cats, ann])
            // Ann's class: bob and cat its students (each reads their own member
            // row, ann all of them), following her secret set.
            let klass = try #require(
                try server.ownerQuery("INSERT INTO app.classes (teacher_id, name) VALUES ($1, 'ann class') RETURNING id", [ann]).rows[0][0])
            _ = try server.ownerQuery("INSERT INTO app.class_members (class_id, user_id) VALUES ($1, $2), ($1, $3)", [klass, bob, cat])
            _ = try server.ownerQuery("INSERT INTO app.class_sets (class_id, set_id) VALUES ($1, $2)", [klass, secret])
            let folder = try #require(
                try server.ownerQuery(
                    "INSERT INTO app.folders (owner_id, name) VALUES ($1, 'bob folder') RETURNING id", [bob]
                ).rows[0][0])
            _ = try server.ownerQuery("INSERT INTO app.folder_sets (folder_id, set_id) VALUES ($1, $2), ($1, $3)", [folder, bobs, shared])
            checkpoints.append(try server.maxXID())
            _ = try server.ownerQuery("UPDATE app.terms SET definition = definition || ' (edited)' WHERE set_id = $1 AND word LIKE '% 1%'", [shared])
            _ = try server.ownerQuery("UPDATE app.terms SET is_deleted = true WHERE set_id = $1 AND word LIKE '% 2'", [secret])
            checkpoints.append(try server.maxXID())
            _ = try server.ownerQuery("UPDATE app.class_members SET is_deleted = true WHERE class_id = $1 AND user_id = $2", [klass, cat])
            _ = try server.ownerQuery("INSERT INTO app.set_collaborators (set_id, user_id) VALUES ($1, $2)", [shared, cat])
            _ = try server.ownerQuery("UPDATE app.set_collaborators SET is_deleted = true WHERE set_id = $1 AND user_id = $2", [shared, bob])
            checkpoints.append(try server.maxXID())
            _ = try server.ownerQuery("UPDATE app.terms SET definition = definition || ' (later)' WHERE set_id = $1 AND word LIKE '% 3'", [shared])
            _ = try server.ownerQuery("UPDATE app.study_sets SET is_deleted = true WHERE id = $1", [cats])
            checkpoints.append(try server.maxXID())
            _ = try server.ownerQuery("UPDATE app.study_sets SET title = 'bob renamed' WHERE id = $1", [bobs])
            let last = try server.maxXID()
            try waitUntil("every transaction older than xid \(last) to end", within: 120) {
                UInt64(try server.ownerQuery("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").rows[0][0] ?? "0") ?? 0 > last
            }
            return checkpoints
        }

        struct Answer {
            let result: PostgresResult
            /// The page statement's row, every column.
            let page: [String?]
            /// The activity check's answer: whether anything follows the cursor.
            let active: String?
        }

        /// Runs the plans' page and activity statements as `userID` in one
        /// snapshot (so that the frontier is the same for all).
        static func allWays(_ server: TestServer, _ plans: [ChangesPlan], userID: String) throws -> [Answer] {
            try server.app.pool.withConnection { connection in
                try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
                defer { _ = try? connection.execute("ROLLBACK") }
                _ = try connection.query("SELECT set_config('ferry.user_id', $1, true)", [userID])
                return try plans.map { plan in
                    let page = plan.statement.postgres, activity = plan.activityStatement.postgres
                    let result = try connection.query(page.sql, page.params)
                    let row = result.rows[0]
                    return Answer(
                        result: result, page: (0..<8).map { row[$0] },
                        active: try connection.query(activity.sql, activity.params).rows[0][3])
                }
            }
        }
    }
}
