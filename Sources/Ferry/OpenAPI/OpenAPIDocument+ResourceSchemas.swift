import FerryHTTP

extension OpenAPIDocument {
    /// Per resource: the row, its write body, its bulk items and its envelopes.
    func resourceSchemas(_ resource: Resource) -> [(String, JSONValue)] {
        let name = Self.componentName(resource.name)
        let row = JSONValue.object([
            ("type", "object"),
            ("description", .string("A row of \(resource.schema).\(resource.name).")),
            ("properties", .object(resource.columns.map { ($0.name, Self.columnSchema($0)) })),
            ("required", .array(resource.columns.map { .string($0.name) })),
        ])
        let writable = resource.columns.filter(\.writable)
        let idSchema = Self.typeSchema(resource.column("id")?.type ?? "")
            + [("description", JSONValue.string("Optional on create: clients may generate ids offline."))]
        var writeProperties: [(String, JSONValue)] = [
            ("id", .object(idSchema)),
            ("revision", .object([("type", "integer"), ("description", "The revision this write is based on (the precondition).")])),
        ]
        for column in writable {
            writeProperties.append((column.name, column.name == "rank" && resource.isRanked
                ? Self.rankWriteSchema(Self.columnSchema(column)) : Self.columnSchema(column)))
        }
        let requiredOnCreate = writable.filter { !$0.nullable && !$0.hasDefault }.map { JSONValue.string($0.name) }
        let write = JSONValue.object([
            ("type", "object"),
            ("description", "Writable fields. last_modified and is_deleted are ignored, so a whole row may be echoed back."),
            ("properties", .object(writeProperties)),
        ])
        let create = JSONValue.object([("allOf", .array([Self.ref("schemas", "\(name).write")])),
                                       ("required", .array(requiredOnCreate))])
        let bulkItem = JSONValue.object([("allOf", .array([Self.ref("schemas", "\(name).write")])),
                                         ("required", ["id", "revision"])])
        let multiShow = JSONValue.object([
            ("type", "object"),
            ("properties", .object([
                ("data", .object([("type", "array"), ("items", .object([("oneOf", .array([
                    Self.ref("schemas", name), Self.ref("schemas", "Tombstone"),
                ]))]))])),
                ("missing", .object([("type", "array"), ("items", .object([]))])),
            ])),
            ("required", ["data", "missing"]),
        ])
        let index = JSONValue.object([
            ("type", "object"),
            ("properties", .object([
                ("data", .object([("type", "array"), ("items", .object([("oneOf", .array([
                    Self.ref("schemas", name), Self.ref("schemas", "Tombstone"),
                ]))]))])),
                ("paging", Self.ref("schemas", "Paging")),
            ])),
            ("required", ["data", "paging"]),
        ])
        return [
            (name, row), ("\(name).write", write), ("\(name).create", create), ("\(name).bulkItem", bulkItem),
            ("\(name).multiShow", multiShow), ("\(name).index", index),
        ]
    }

    /// A rank is a key, or a request for the server to compute one. `anyOf`,
    /// since `"first"` is also a valid key string.
    static func rankWriteSchema(_ key: JSONValue) -> JSONValue {
        .object([("anyOf", .array([
            key,
            .object([("type", "string"), ("enum", ["first", "last"])]),
            .object([("type", "object"), ("properties", .object([("after", .object([]))])), ("required", ["after"]),
                     ("additionalProperties", false)]),
            .object([("type", "object"), ("properties", .object([("before", .object([]))])), ("required", ["before"]),
                     ("additionalProperties", false)]),
        ]))])
    }
}
