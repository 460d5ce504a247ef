import FerryHTTP

extension OpenAPIDocument {
    /// `POST /v1/changes/wait`'s body, as ``ChangesWaitRequest`` checks it.
    static func changesWaitSchema(maxStreams: Int) -> JSONValue {
        .object([
            ("type", "object"),
            (
                "properties",
                .object([
                    (
                        "wait",
                        type(
                            "integer", ("minimum", 0), ("maximum", .int(ChangesWaitRequest.maxWait)),
                            ("description", "Seconds to wait at most (capped at `live.max_wait_seconds`); 0 answers at once."))
                    ),
                    (
                        "since",
                        type(
                            "object",
                            ("propertyNames", type("string", ("pattern", #"^(default|[a-z][a-z0-9_]{0,62}:[^\s]{1,200})$"#))),
                            ("additionalProperties", type("string", ("pattern", "^1[A-Za-z0-9_-]+$"))),
                            ("maxProperties", .int(maxStreams)),
                            (
                                "description",
                                "Each stream's cursor: `default` for the default stream, `<stream name>:<row id>` for a subscription."
                            ))
                    ),
                ])
            ),
            ("required", ["wait", "since"]),
            ("additionalProperties", false),
        ])
    }
}
