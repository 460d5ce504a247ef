import FerryRank
import FerryHTTP

extension OpenAPIDocument {
    /// Per resource: the row, its write body, its bulk items and its envelopes.
    func resourceSchemas(_ resource: Resource) -> [(String, JSONValue)] {
        let name = Self.componentName(resource.name)
        // A live row's is_deleted is false, a tombstone's true (the Tombstone schema): so a
        // list of both is unambiguous whatever the table's other columns, even when a
        // tombstone of a table of references carries every column a row has.
        let row = JSONValue.object([
            ("type", "object"),
            ("description", .string("A row of \(resource.schema).\(resource.name).")),
            (
                "properties",
                .object(
                    resource.columns.map { column in
                        (
                            column.name,
                            column.name == "is_deleted"
                                ? Self.type("boolean", ("const", false), ("description", "false: a deleted row is a Tombstone."))
                                : Self.columnSchema(column)
                        )
                    })
            ),
            ("required", .array(resource.columns.map { .string($0.name) })),
            // The resource as GET /v1 lists it, for code generators (`ferry generate swift`).
            ("x-ferry-resource", CatalogRoutes.entry(resource)),
        ])
        // `id` is writable on create, but its member is written out below, per body.
        let writable = resource.columns.filter { $0.writable && $0.name != "id" }
        let idType = Self.typeSchema(resource.column("id")?.valueType ?? "")
        let revision = Self.milliseconds
        // The write bodies list every member the server takes: another is 422 `unknown_field`.
        // last_modified and is_deleted take any value and are ignored, so a whole row may be echoed back.
        var echoed: [(String, JSONValue)] = []
        for column in ["last_modified", "is_deleted"] where resource.column(column) != nil {
            echoed.append((column, .object([("description", "Ignored: the server sets it.")])))
        }
        var fields: [(String, JSONValue)] = []
        for column in writable {
            fields.append(
                (
                    column.name,
                    column.name == "rank" && resource.isRanked
                        ? Self.rankWriteSchema(idType) : Self.columnSchema(column)
                ))
        }
        let requiredOnCreate = writable.filter { !$0.nullable && !$0.hasDefault }.map { JSONValue.string($0.name) }
        let write = JSONValue.object([
            ("type", "object"),
            ("description", "Writable fields. The path names the row: a body `id` is ignored."),
            (
                "properties",
                .object(
                    [
                        ("id", .object([("description", "Ignored: the path names the row.")])),
                        ("revision", .object([("description", "The revision this write is based on (the precondition).")] + Self.members(revision))),
                    ] + fields + echoed)
            ),
            ("additionalProperties", false),
        ])
        // PUT resets the fields it leaves out, so a non-null field without a default must be sent.
        let replace = JSONValue.object([
            ("allOf", .array([Self.ref("schemas", "\(name).write")])),
            ("required", .array(requiredOnCreate)),
        ])
        let create = JSONValue.object([
            ("type", "object"),
            ("description", "A new row's fields."),
            (
                "properties",
                .object(
                    [
                        ("id", .object(idType + [("description", "Optional: clients may generate ids offline.")])),
                        ("revision", .object([("description", "Ignored on create.")])),
                    ] + fields + echoed)
            ),
            ("required", .array(requiredOnCreate)),
            ("additionalProperties", false),
        ])
        let bulkItem = JSONValue.object([
            ("type", "object"),
            ("description", "One row of a bulk update: its id, the revision it is based on, and the fields to change."),
            (
                "properties",
                .object(
                    [
                        ("id", .object(idType)),
                        ("revision", .object([("description", "The revision this write is based on (the precondition).")] + Self.members(revision))),
                    ] + fields + echoed)
            ),
            ("required", ["id", "revision"]),
            ("additionalProperties", false),
        ])
        let idRevision = Self.object(
            [
                ("id", .object(idType)),
                ("revision", .object([("description", "The revision the delete is based on.")] + Self.members(revision))),
            ], required: ["id", "revision"])
        // What `data` holds in a multi-show and an Index: this resource's rows and tombstones.
        let rowsAndTombstones = JSONValue.object([
            ("type", "array"),
            ("items", .object([("oneOf", .array([Self.ref("schemas", name), Self.ref("schemas", "Tombstone")]))])),
        ])
        let multiShow = JSONValue.object([
            ("type", "object"),
            (
                "properties",
                .object([
                    ("data", rowsAndTombstones),
                    ("missing", .object([("type", "array"), ("items", .object([]))])),
                ])
            ),
            ("required", ["data", "missing"]),
        ])
        let index = JSONValue.object([
            ("type", "object"),
            (
                "properties",
                .object([
                    ("data", rowsAndTombstones),
                    ("paging", Self.ref("schemas", "Paging")),
                ])
            ),
            ("required", ["data", "paging"]),
        ])
        return [
            (name, row), ("\(name).write", write), ("\(name).replace", replace), ("\(name).create", create), ("\(name).bulkItem", bulkItem),
            ("\(name).idRevision", idRevision),
            ("\(name).multiShow", multiShow), ("\(name).index", index),
        ]
    }

    /// A rank is a key, or a request for the server to compute one. `anyOf`,
    /// since `"first"` is also a valid key string. A key is what
    /// `Rank.validate` accepts (non-empty, at most `Rank.maxLength` base-62
    /// digits, no trailing `0`); an anchor is an id of the resource.
    static func rankWriteSchema(_ id: [(String, JSONValue)]) -> JSONValue {
        let key = type(
            "string", ("pattern", .string("^[0-9A-Za-z]{0,\(Rank.maxLength - 1)}[1-9A-Za-z]$")),
            ("description", "A fractional-index key, compared bytewise."))
        let anchor = { (side: String) -> JSONValue in
            .object([
                ("type", "object"), ("properties", .object([(side, .object(id))])), ("required", .array([.string(side)])),
                ("additionalProperties", false),
            ])
        }
        return .object([
            (
                "anyOf",
                .array([
                    key,
                    .object([("type", "string"), ("enum", ["first", "last"])]),
                    anchor("after"),
                    anchor("before"),
                ])
            )
        ])
    }
}
