import FerryKit

/// The example app's schema as `GET /v1` describes it, for tests without a
/// server, and a resource with an integer and a boolean column for type checks.
enum ExampleSchema {
    static let sync: [ServerSchema.Column] = [
        .init(name: "revision", type: "bigint", nullable: false, writable: false, hasDefault: true),
        .init(name: "last_modified", type: "bigint", nullable: false, writable: false, hasDefault: true),
        .init(name: "is_deleted", type: "boolean", nullable: false, writable: false, hasDefault: true),
    ]
    static let id = ServerSchema.Column(name: "id", type: "uuid", nullable: false, writable: true, hasDefault: true)

    static let studySets = ServerSchema.Resource(
        name: "study_sets",
        columns: [
            id, .init(name: "creator_id", type: "uuid", updatable: false, hasDefault: true, references: "users"),
            .init(name: "title", type: "text", nullable: false), .init(name: "description", type: "text"),
        ] + sync)
    static let terms = ServerSchema.Resource(
        name: "terms",
        columns: [
            id, .init(name: "set_id", type: "uuid", nullable: false, updatable: false, references: "study_sets"),
            .init(name: "word", type: "text"), .init(name: "definition", type: "text"), .init(name: "rank", type: "text"),
        ] + sync, ranked: true, rankScope: "set_id")
    static let folders = ServerSchema.Resource(name: "folders", columns: [id, .init(name: "name", type: "text")] + sync)
    static let folderSets = ServerSchema.Resource(
        name: "folder_sets",
        columns: [
            id, .init(name: "folder_id", type: "uuid", updatable: false, references: "folders"),
            .init(name: "set_id", type: "uuid", updatable: false, references: "study_sets"),
        ] + sync, joinTable: true)

    static let schema = ServerSchema(resources: [folderSets, folders, studySets, terms])

    /// A scoreboard: not the study app's, for the types it lacks.
    static let scores = ServerSchema.Resource(
        name: "scores",
        columns: [
            id, .init(name: "player", type: "text", nullable: false), .init(name: "points", type: "integer", nullable: false),
            .init(name: "final", type: "boolean", hasDefault: true), .init(name: "tags", type: "text[]"), .init(name: "extra", type: "jsonb"),
        ] + sync)

    static let withScores = ServerSchema(resources: schema.resources + [scores])
}
