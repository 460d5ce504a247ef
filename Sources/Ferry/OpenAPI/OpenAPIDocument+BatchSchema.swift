import FerryHTTP

extension OpenAPIDocument {
    /// `POST /v1/batch`'s body, as `BatchOperation.parse` checks it: an
    /// operation has only these four members (another is a 400), a path
    /// starts with `/` and has no space or control character, and header
    /// names and values have no control character.
    static func batchRequestSchema(maxOperations: Int) -> JSONValue {
        let operation = JSONValue.object([
            ("type", "object"),
            (
                "properties",
                .object([
                    ("method", type("string", ("enum", ["GET", "POST", "PUT", "PATCH", "DELETE"]))),
                    ("path", type("string", ("pattern", #"^/[^\u0000-\u0020\u007F]*$"#))),
                    (
                        "headers",
                        type(
                            "object",
                            ("propertyNames", type("string", ("minLength", 1), ("pattern", #"^[^\u0000-\u001F\u007F]*$"#))),
                            ("additionalProperties", type("string", ("pattern", #"^[^\u0000-\u001F\u007F]*$"#))))
                    ),
                    ("body", .object([("description", "The operation's JSON body, any JSON value.")])),
                ])
            ),
            ("required", ["method", "path"]),
            ("additionalProperties", false),
        ])
        return object(
            [
                ("operations", type("array", ("items", operation), ("maxItems", .int(maxOperations))))
            ], required: ["operations"])
    }
}
