import FerryHTTP

extension OpenAPIDocument {
    /// `order=` as `IndexQuery` reads it: one or more of the resource's
    /// columns, each with an optional `.asc` or `.desc`, comma-separated.
    static func orderSchema(_ resource: Resource) -> JSONValue {
        let column = "(" + resource.columns.map { regexEscaped($0.name) }.joined(separator: "|") + ")(\\.asc|\\.desc)?"
        return type("string", ("pattern", .string("^\(column)(,\(column))*$")))
    }

    /// An equality filter's value: one value of the column's type, or a
    /// comma-separated list of them (IN). A value that does not fit the type
    /// is 400 `invalid_query` (`IndexQuery.fits`); text columns take any string.
    static func filterSchema(_ column: Column) -> JSONValue {
        let value: String? =
            switch column.kind {
            case .uuid: "([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]{32})"
            // Digits a column always holds: one fewer than its largest value has, so every match fits.
            case .integer(_, let max): "-?[0-9]{1,\(String(max).count - 1)}"
            case .boolean: "(true|false)"
            default: nil
            }
        guard let value else { return type("string") }
        return type("string", ("pattern", .string("^\(value)(,\(value))*$")))
    }

    /// A path id (or a comma-separated list of them, multi-show). The server
    /// refuses a decoded control character in any path with 400 `bad_request`;
    /// anything else that is no id of the resource names no row (404).
    static let pathIDSchema = type("string", ("minLength", 1), ("pattern", #"^[^\u0000-\u001F\u007F]+$"#))
}
