@testable import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

extension ChangesSuites {
    /// A teacher with many classes (examples/study 0020) reads every member row
    /// of them through the classes they own: a probe per class. A quiet poll,
    /// and a page, must not pay those probes when the teacher reads most of the
    /// classes: the member rows walk with the classes (``ReadThrough/walkGate(_:)``).
    /// Judged by what `EXPLAIN ANALYZE` ran, never by time.
    ///
    /// `FERRY_TEACHER_CLASSES` sets the class counts (default `1000`);
    /// `FERRY_EXPLAIN_OUT` names a file for the plans (bench/feed/README.md).
    @Suite struct TeacherClassesCostTests {
        @Test func aTeachersPollDoesNotProbeEachClass() throws {
            let counts = (ProcessInfo.processInfo.environment["FERRY_TEACHER_CLASSES"] ?? "1000")
                .split(separator: ",").compactMap { Int($0) }
            var plans = ""
            for classes in counts {
                let server = try TestServer()
                defer { server.stop() }
                let teacher = try server.user("teacher")
                _ = try server.ownerQuery(
                    "INSERT INTO app.classes (teacher_id, name) SELECT $1, 'class ' || i FROM generate_series(1, $2) i",
                    [teacher.id, String(classes)])
                for name in ["s1", "s2", "s3"] {
                    let student = try server.user(name)
                    _ = try server.ownerQuery("INSERT INTO app.class_members (class_id, user_id) SELECT id, $1 FROM app.classes", [student.id])
                }
                let set = try server.makeSet(for: teacher.id)
                _ = try server.ownerQuery("INSERT INTO app.class_sets (class_id, set_id) SELECT id, $1 FROM app.classes", [set])
                _ = try server.ownerQuery("ANALYZE app.classes, app.class_members, app.class_sets")
                let feed = FeedFollower(server: server, token: teacher.token)
                try feed.catchUp(pastXID: try server.maxXID(), limit: 5_000, timeout: 300)

                let catalog = server.app.schema.catalog
                let plan = ChangesPlan(
                    request: ChangesRequest(
                        since: try #require(feed.position), limit: 500, resources: catalog.names.sorted(by: ChangeOrder.precedes)),
                    catalog: catalog, scopes: try CostTests.scopes(server),
                    readPaths: try ReadPath.load(schema: "app", catalog: catalog, database: server.app.database))
                for (name, statement) in [("activity", plan.activityStatement), ("page", plan.statement)] {
                    let executed = try CostTests.explain(server, statement: statement, userID: teacher.id)
                    let perClass = executed.executed.filter { $0.relation == "class_members" && $0.loops >= classes }
                    #expect(perClass.isEmpty, "\(classes) classes, \(name): a probe per class\n\(executed.text)")
                    plans += "\(classes) classes, \(name): \(executed.buffers) buffers, \(executed.executionMs) ms\n\(executed.text)\n\n"
                }
            }
            if let out = ProcessInfo.processInfo.environment["FERRY_EXPLAIN_OUT"] {
                try plans.write(toFile: out, atomically: true, encoding: .utf8)
            }
        }
    }
}
