import FerryHTTP

/// A stream as `GET /v1` lists it (and the OpenAPI document, in
/// `x-ferry-streams`): its name, its root resource, and the resources a
/// subscription carries, as the feed's rooted read finds them
/// (``ReadThrough/rooted(at:)``), so that a client (and `ferry generate
/// swift`) knows what `stream=<name>:<id>` brings without reading the rules.
public struct StreamListing: Sendable, Equatable {
    public let name: String
    /// The resource whose row, by id, a subscription names (e.g. `study_sets`).
    public let root: String
    /// The root and every resource whose rule reads through it (children,
    /// their children, member rows), in the feed's order (by name).
    public let resources: [String]

    /// Each of `streams` as its subscriptions read it; a stream whose root has
    /// no read paths (a policy of its own beside the rule) lists its root only,
    /// as the feed refuses to serve it.
    static func of(_ streams: [SyncStream], readThrough: ReadThrough) -> [StreamListing] {
        streams.map { stream in
            StreamListing(name: stream.name, root: stream.scope, resources: readThrough.rooted(at: stream.scope)?.tables ?? [stream.scope])
        }
    }

    var json: JSONValue {
        .object([
            ("name", .string(name)),
            ("root", .string(root)),
            ("path", .string("/v1/changes?stream=\(PercentEncoding.encoded(name)):{id}")),
            ("resources", .array(resources.map { .string($0) })),
        ])
    }
}

extension AccessScopeCache {
    /// The streams of the schema load as `GET /v1` lists them.
    func listing(for catalog: SchemaCatalog, generation: Int, schema: String, database: PostgresGateway) throws -> [StreamListing] {
        StreamListing.of(
            try streams(for: catalog, generation: generation, schema: schema, database: database),
            readThrough: try readThrough(for: catalog, generation: generation, schema: schema, database: database))
    }
}
