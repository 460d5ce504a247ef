@testable import Ferry
import FerryHTTP
import Foundation
import Testing

/// A catalog like the example schema's, built in memory: what the pipeline's
/// unit tests parse and plan against, with no database.
enum PipelineFixture {
    static let token = "fixture-token-0123456789"
    static let set = "0b7a3c52-5c1e-4c4e-9a57-3f1de1b0c001"
    static let term = "0b7a3c52-5c1e-4c4e-9a57-3f1de1b0c002"

    static func column(
        _ name: String, _ type: String, nullable: Bool = true, hasDefault: Bool = false, insertable: Bool = true,
        updatable: Bool = true, references: String? = nil
    ) -> Column {
        Column(
            name: name, type: type, nullable: nullable, hasDefault: hasDefault, insertable: insertable, updatable: updatable,
            references: references, defaultSQL: nil)
    }

    static let syncColumns = [
        column("revision", "bigint", nullable: false, hasDefault: true, insertable: false, updatable: false),
        column("last_modified", "bigint", nullable: false, hasDefault: true, insertable: false, updatable: false),
        column("is_deleted", "boolean", nullable: false, hasDefault: true, insertable: false, updatable: true),
    ]

    static let sets = Resource(
        name: "sets", schema: "app",
        columns: [
            column("id", "uuid", nullable: false, hasDefault: true, updatable: false),
            column("title", "text", nullable: false),
        ] + syncColumns,
        uniqueKeys: [["id"]], constraints: nil)

    static let terms = Resource(
        name: "terms", schema: "app",
        columns: [
            column("id", "uuid", nullable: false, hasDefault: true, updatable: false),
            column("set_id", "uuid", nullable: false, updatable: false, references: "app.sets"),
            column("word", "text", nullable: false), column("note", "text"),
            column("rank", "text"),
        ] + syncColumns,
        uniqueKeys: [["id"]], constraints: nil)

    /// A resource whose ids are integers: never paged through snapshots.
    static let counters = Resource(
        name: "counters", schema: "app",
        columns: [
            column("id", "bigint", nullable: false, hasDefault: true, updatable: false),
            column("hits", "integer", nullable: false),
        ] + syncColumns,
        uniqueKeys: [["id"]], constraints: nil)

    static let catalog = SchemaCatalog(tables: [sets, terms, counters])

    static let limits = ResourceAction.Limits(maxBulkItems: 3, defaultLimit: 10, maxLimit: 4)

    /// A request as the parser would hand it over: the path split from the
    /// query, the query decoded, a bearer token unless `token` is nil.
    static func request(
        _ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = [],
        token: String? = PipelineFixture.token, contentType: String? = "application/json"
    ) -> HTTPRequest {
        let parts = target.split(separator: "?", maxSplits: 1).map(String.init)
        let query =
            parts.count > 1
            ? parts[1].split(separator: "&").map { pair -> (name: String, value: String) in
                let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (kv[0], kv.count > 1 ? kv[1].removingPercentEncoding ?? kv[1] : "")
            } : []
        var fields = headers
        if let token { fields.append(("Authorization", "Bearer \(token)")) }
        if body != nil, let contentType { fields.append(("Content-Type", contentType)) }
        return HTTPRequest(
            method: method, target: target, path: parts[0], rawQuery: parts.count > 1 ? parts[1] : nil,
            query: query, headers: HTTPHeaders(fields), body: Array((body ?? "").utf8))
    }

    /// The route and parameters the router would find for `target`'s path.
    static func route(_ method: String, _ target: String) -> (ResourceAction.Route, RouteParameters) {
        let segments = target.split(separator: "?")[0].split(separator: "/").map(String.init)
        let resource = segments.count > 1 ? segments[1] : ""
        if segments.count > 2 {
            let route: ResourceAction.Route =
                switch method {
                case "GET": .read
                case "PUT": .put
                case "PATCH": .patch
                default: .delete
                }
            return (route, RouteParameters([("resource", resource), ("id", segments[2])]))
        }
        let route: ResourceAction.Route =
            switch method {
            case "GET": .index
            case "POST": .create
            case "PATCH": .bulkPatch
            default: .bulkDelete
            }
        return (route, RouteParameters([("resource", resource)]))
    }

    /// The action `method target` asks for.
    static func parse(
        _ method: String, _ target: String, body: String? = nil, headers: [(String, String)] = [],
        token: String? = PipelineFixture.token, contentType: String? = "application/json"
    ) throws -> ResourceAction {
        let (route, parameters) = route(method, target)
        return try ResourceAction.parse(
            request(method, target, body: body, headers: headers, token: token, contentType: contentType),
            route: route, parameters: parameters, catalog: catalog, limits: limits)
    }

    /// The problem `body` throws, or nil when it throws none (or something else).
    static func thrownProblem(_ body: () throws -> Void) -> Problem? {
        do {
            try body()
            return nil
        } catch let problem as Problem {
            return problem
        } catch {
            return nil
        }
    }
}
