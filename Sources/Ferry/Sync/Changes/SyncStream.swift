import FerryPostgres

/// A stream an app declared beside its rules (core 0025, `ferry.sync_stream`):
/// a row of `scope` (an owned table), by id, and every row whose rule reads
/// through it. A device subscribes with `GET /v1/changes?stream=<name>:<id>`
/// (``ChangesRequest/subscription``); the feed then reads that row's tree
/// only, with public rows readable (``ChangesPlan/prelude``).
public struct SyncStream: Sendable, Equatable {
    public let name: String
    /// The scope resource (e.g. `study_sets`).
    public let scope: String

    /// The streams of `schema` whose scope is a served resource. A database
    /// from before core 0025 has none.
    static func load(schema: String, catalog: SchemaCatalog, database: PostgresGateway) throws -> [SyncStream] {
        guard try database.anonymous([present])[0].first?.bool("present") == true else { return [] }
        let result = try database.anonymous([PlannedStatement("SELECT * FROM ferry.streams_of(\(bind: schema))" as SQLQuery)])[0]
        let name = try result.column("name", as: String.self), scope = try result.column("scope_name", as: String.self)
        return try result.rows.compactMap { row in
            guard let name = try row.decode(name), let scope = try row.decode(scope), catalog[scope] != nil else { return nil }
            return SyncStream(name: name, scope: scope)
        }
    }

    static let present = PlannedStatement("SELECT pg_catalog.to_regprocedure('ferry.streams_of(name)') IS NOT NULL AS present")

    /// The stream `subscription` names among `streams`: 400 `invalid_query`
    /// for a name the app did not declare or an id that cannot be its scope's
    /// (both public facts). The feed and the console's replay of it
    /// (``ConsoleRoutes``) refuse a subscription by this one check.
    static func named(_ subscription: StreamSubscription, among streams: [SyncStream], catalog: SchemaCatalog) throws -> SyncStream {
        guard let stream = streams.first(where: { $0.name == subscription.name }) else {
            let names = streams.map(\.name).joined(separator: ", ")
            throw ChangesRequest.invalid("no stream named \(subscription.name)" + (names.isEmpty ? "" : "; the streams are \(names)"))
        }
        guard let scope = catalog[stream.scope], scope.idKind.accepts(id: subscription.id) else {
            throw ChangesRequest.invalid("\(subscription.name)'s id is not of its table's id type: \(subscription.id.prefix(64))")
        }
        return stream
    }
}

/// A subscription as a request states it: `stream=<name>:<id>`.
public struct StreamSubscription: Sendable, Equatable {
    public let name: String
    public let id: String

    /// Parses `name:id` (the id is everything after the first colon).
    init?(_ text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = String(text[..<colon])
        let id = String(text[text.index(after: colon)...])
        guard !name.isEmpty, name.utf8.count <= 63, !id.isEmpty, id.utf8.count <= 200,
            name.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F }),
            let first = name.utf8.first, first >= 0x61, first <= 0x7A
        else { return nil }
        self.name = name
        self.id = id
    }

    /// The stream's rooted read: its scope table and the id as text, for the plan.
    var key: String { "\(name):\(id)" }
}
