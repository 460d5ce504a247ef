import FerryKit

/// The example app's schema as `GET /v1` describes it, for tests without a server.
enum ExampleSchema {
    static let sync: [ServerSchema.Column] = [
        .init(name: "revision", type: "bigint", nullable: false, writable: false, hasDefault: true),
        .init(name: "last_modified", type: "bigint", nullable: false, writable: false, hasDefault: true),
        .init(name: "is_deleted", type: "boolean", nullable: false, writable: false, hasDefault: true),
    ]
    static let id = ServerSchema.Column(name: "id", type: "uuid", nullable: false, writable: true, hasDefault: true)

    static let studySets = ServerSchema.Resource(name: "study_sets", columns: [
        id, .init(name: "creator_id", type: "uuid", hasDefault: true, references: "users"),
        .init(name: "title", type: "text", nullable: false), .init(name: "description", type: "text"),
    ] + sync)
    static let terms = ServerSchema.Resource(name: "terms", columns: [
        id, .init(name: "set_id", type: "uuid", nullable: false, references: "study_sets"),
        .init(name: "word", type: "text"), .init(name: "definition", type: "text"), .init(name: "rank", type: "text"),
    ] + sync, ranked: true, rankScope: "set_id")
    static let folders = ServerSchema.Resource(name: "folders", columns: [id, .init(name: "name", type: "text")] + sync)
    static let folderSets = ServerSchema.Resource(name: "folder_sets", columns: [
        id, .init(name: "folder_id", type: "uuid", references: "folders"), .init(name: "set_id", type: "uuid", references: "study_sets"),
    ] + sync, joinTable: true)

    static let schema = ServerSchema(resources: [folderSets, folders, studySets, terms])
}
