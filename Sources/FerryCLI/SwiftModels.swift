import Foundation

/// `ferry generate swift`'s generator: the server's resources in, one Swift
/// file per resource out, each a FerryKit `FerryRecord` struct. Pure (text
/// to text), so its output is tested without a server, and the study
/// example's committed models are checked against it in CI.
enum SwiftModels {
    /// A resource as `GET /v1` lists it (and the OpenAPI document carries in
    /// each row schema's `x-ferry-resource`).
    struct Resource: Decodable, Equatable {
        let name: String
        let ranked: Bool?
        let rankScope: String?
        let columns: [Column]

        enum CodingKeys: String, CodingKey { case name, ranked, rankScope = "rank_scope", columns }
    }

    struct Column: Decodable, Equatable {
        let name: String
        let type: String
        /// A domain's base type (`GET /v1` since domains were typed by it); absent from older servers.
        let baseType: String?
        let nullable: Bool
        let writable: Bool
        let updatable: Bool?
        let hasDefault: Bool?
        let references: String?
        let comment: String?

        enum CodingKeys: String, CodingKey {
            case name, type, baseType = "base_type", nullable, writable, updatable, hasDefault = "has_default", references, comment
        }
    }

    /// A stream as `GET /v1` lists it (`streams`) and the OpenAPI document
    /// carries it (`x-ferry-streams`): its root resource's record becomes a
    /// `FerryStreamRoot`, so that an app subscribes by type.
    struct Stream: Decodable, Equatable {
        let name: String
        let root: String
        let resources: [String]?
    }

    /// The streams in `json` (either form of input); none when it lists none,
    /// as a server from before streams does.
    static func streams(from json: Data) throws -> [Stream] {
        guard let top = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw Unreadable(description: "the input is not a JSON object")
        }
        guard let listed = top["streams"] ?? top["x-ferry-streams"] else { return [] }
        do {
            return try JSONDecoder().decode([Stream].self, from: try JSONSerialization.data(withJSONObject: listed))
                .sorted { $0.name < $1.name }
        } catch {
            throw Unreadable(description: "a stream could not be read: \(error)")
        }
    }

    /// What the input did not hold.
    struct Unreadable: Error, CustomStringConvertible {
        let description: String
    }

    /// The resources in `json`: an OpenAPI document served by Ferry
    /// (`/openapi.json`), or a `GET /v1` listing.
    static func resources(from json: Data) throws -> [Resource] {
        guard let top = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw Unreadable(description: "the input is not a JSON object")
        }
        var entries: [Any] = []
        if let listed = top["resources"] as? [Any] {
            entries = listed
        } else if let schemas = (top["components"] as? [String: Any])?["schemas"] as? [String: Any] {
            entries = schemas.keys.sorted().compactMap { (schemas[$0] as? [String: Any])?["x-ferry-resource"] }
            if entries.isEmpty {
                throw Unreadable(
                    description: "the OpenAPI document has no x-ferry-resource in its schemas: is it Ferry's, of a version that has them?")
            }
        } else {
            throw Unreadable(
                description: "the input is neither Ferry's OpenAPI document (no components.schemas) nor a GET /v1 listing (no resources)")
        }
        let data = try JSONSerialization.data(withJSONObject: entries)
        do {
            return try JSONDecoder().decode([Resource].self, from: data).sorted { $0.name < $1.name }
        } catch {
            throw Unreadable(description: "a resource could not be read: \(error)")
        }
    }

    /// What the models cannot do, one sentence each: a resource whose `id` is not text.
    /// `FerryID` is a string that FerryKit makes offline (a UUID), so such a record can
    /// neither read the resource's rows nor create one. Generated anyway, so that the rest
    /// of an app builds.
    static func warnings(_ resources: [Resource]) -> [String] {
        resources.compactMap { resource in
            guard let id = resource.columns.first(where: { $0.name == "id" }), scalar(id.baseType ?? id.type) != "String" else {
                return nil
            }
            return
                "\(resource.name).id is \(id.baseType ?? id.type): FerryKit's ids are strings it makes offline (FerryID, a UUID), so \(typeName(resource.name)) can neither read this resource's rows nor create one; give the table a uuid id"
        }
    }

    /// The files to write: name to contents, one per resource.
    static func files(_ resources: [Resource], streams: [Stream] = []) -> [String: String] {
        let names = typeNames(resources)
        var files: [String: String] = [:]
        for resource in resources where resource.columns.contains(where: { $0.name == "id" }) {
            files[names[resource.name]! + ".swift"] = file(
                resource, names: names, all: resources, streams: streams.filter { $0.root == resource.name })
        }
        return files
    }

    /// Each resource's type name (``typeName(_:)``); where two make the same one (`odd
    /// things` and `odd_things`: both `OddThing`), the later gets the first free number
    /// (`OddThing2`), so that no file overwrites another.
    static func typeNames(_ resources: [Resource]) -> [String: String] {
        unique(resources.map { ($0.name, typeName($0.name)) })
    }

    /// Each column's Swift property (``property(_:)``); where two columns of one table make
    /// the same one (`due date` and `due_date`: both `dueDate`), the later column's gets the
    /// first free number (`dueDate2`): a file that compiles.
    static func properties(_ resource: Resource) -> [String: String] {
        unique(resource.columns.map { ($0.name, property($0.name)) })
    }

    private static func unique(_ pairs: [(key: String, name: String)]) -> [String: String] {
        var result: [String: String] = [:]
        var taken = Set<String>()
        for (key, base) in pairs {
            var name = base
            var number = 2
            while taken.contains(bare(name)) {
                name = bare(base) + String(number)
                number += 1
            }
            taken.insert(bare(name))
            result[key] = name
        }
        return result
    }

    /// How every generated file begins; a file that does not is never overwritten or removed.
    static let header = "// Generated by `ferry generate swift`"

    static let syncColumns: Set<String> = ["id", "revision", "last_modified", "is_deleted"]

    /// The modules a generated file uses, spelt so that no line of this file
    /// reads as an import of its own (ModuleEdgesTests reads the sources).
    static let imports = ["FerryKit", "GRDB"].map { "import " + $0 }.joined(separator: "\n")

    /// `streams`: those rooted at `resource`; the first (by name) is the one
    /// its `FerryStreamRoot` conformance names.
    static func file(_ resource: Resource, names: [String: String], all allResources: [Resource], streams: [Stream] = []) -> String {
        let type = names[resource.name]!
        let properties = Self.properties(resource)
        func property(_ column: String) -> String { properties[column] ?? Self.property(column) }
        let ranked = resource.ranked == true && resource.columns.contains { $0.name == "rank" }
        let columns = resource.columns.filter { $0.name != "is_deleted" }
        // FerryStreamRoot refines FerryRecord; a ranked root keeps FerryRankedRecord beside it.
        let conformances =
            switch (ranked, streams.isEmpty) {
            case (true, true): "FerryRankedRecord, Hashable"
            case (true, false): "FerryRankedRecord, FerryStreamRoot, Hashable"
            case (false, true): "FerryRecord, Hashable"
            case (false, false): "FerryStreamRoot, Hashable"
            }
        var out =
            header + """
                 from the server's schema: do not edit.
                // After a migration, generate again (docs/FERRYKIT.md, "Generated models").
                \(imports)

                /// A row of `\(resource.name)`\(ranked ? ", ordered by `rank`" + (resource.rankScope.map { " within its `\($0)`" } ?? "") : "").
                public struct \(type): \(conformances) {
                    public static let resource = \(literal(resource.name))

                """
        if let stream = streams.first {
            let carried = (stream.resources ?? []).filter { $0 != resource.name }.map { "`\($0)`" }
            out += "    /// The stream of one \(type) and what hangs from it"
            out += carried.isEmpty ? "" : " (" + carried.joined(separator: ", ") + ")"
            out += ", by id: `engine.subscribe(\(type).self, id:)`.\n"
            let others = streams.dropFirst().map { "`\($0.name)`" }
            if !others.isEmpty {
                out += "    /// Also rooted here: \(others.joined(separator: ", ")) (`engine.subscribe(stream:id:)`).\n"
            }
            out += "    public static let stream = \(literal(stream.name))\n\n"
        }
        for column in columns {
            for line in docLines(column, resource: resource, names: names) { out += line.isEmpty ? "    ///\n" : "    /// \(line)\n" }
            out += "    public var \(property(column.name)): \(swiftType(column, resource: resource, names: names))\n"
        }
        let parameters = columns.filter { !syncColumns.contains($0.name) || $0.name == "id" }
        let arguments = parameters.map { column in
            let kind = swiftType(column, resource: resource, names: names)
            let fallback = column.name == "id" ? " = FerryID()" : kind.hasSuffix("?") ? " = nil" : ""
            return "\(property(column.name)): \(kind)\(fallback)"
        }
        let oneLine = "    public init(" + arguments.joined(separator: ", ") + ") {"
        // The repository's lint (and most apps') stops lines at 150 columns: a longer one, a parameter a line.
        let wrapped = "    public init(\n        " + arguments.joined(separator: ",\n        ") + "\n    ) {"
        out += "\n" + (oneLine.count <= 150 ? oneLine : wrapped) + "\n"
        for column in parameters { out += "        self.\(property(column.name)) = \(property(column.name))\n" }
        out += "    }\n\n"
        out += "    public enum CodingKeys: String, CodingKey {\n"
        for column in columns {
            let name = property(column.name)
            let bare = name.hasPrefix("`") ? String(name.dropFirst().dropLast()) : name
            out += "        case \(name)" + (bare == column.name ? "" : " = \(literal(column.name))") + "\n"
        }
        out += "    }\n\n"
        let associations = self.associations(resource, properties: properties, names: names, all: allResources)
        if !associations.isEmpty {
            out += "    // Associations, for GRDB's joins: `\(type).including(required: ...)`.\n"
            for line in associations { out += "    \(line)\n" }
            out += "\n"
        }
        out +=
            "    /// The columns, for GRDB's query interface: `\(type).filter(\(type).Columns.\(property(columns.first { !syncColumns.contains($0.name) }?.name ?? "id")) == ...)`.\n"
        out += "    public enum Columns {\n"
        for column in columns {
            out += "        public static let \(property(column.name)) = GRDB.Column(CodingKeys.\(property(column.name)))\n"
        }
        out += "    }\n}\n"
        return out
    }

    /// `belongsTo` for each reference to another resource, `hasMany` for each
    /// reference to this one; GRDB needs the column, since the local tables
    /// carry no foreign keys. `properties`: the resource's columns' Swift names (``properties(_:)``).
    static func associations(_ resource: Resource, properties own: [String: String], names: [String: String], all: [Resource]) -> [String] {
        let taken = Set(own.values.map(bare))
        var used = Set<String>()
        func unique(_ name: String) -> String {
            var name = name
            while taken.contains(name) || used.contains(name) || keywords.contains(name) { name += "Record" }
            used.insert(name)
            return name
        }
        var lines: [String] = []
        for column in resource.columns where column.name != "id" {
            guard let target = column.references, let type = names[target], let columnProperty = own[column.name] else { continue }
            var name = bare(columnProperty)
            if name.hasSuffix("ID"), name.count > 2 { name = String(name.dropLast(2)) }
            let key = unique(name)
            lines.append("public static let \(key) = belongsTo(\(type).self, key: \(literal(key)), using: ForeignKey([\(literal(column.name))]))")
        }
        for child in all {
            let references = child.columns.filter { $0.references == resource.name && $0.name != "id" }
            guard let type = names[child.name], child.columns.contains(where: { $0.name == "id" }) else { continue }
            for column in references {
                var name = bare(property(child.name))
                if references.count > 1 { name += bare(property(column.name)).prefix(1).uppercased() + bare(property(column.name)).dropFirst() }
                let key = unique(name)
                lines.append("public static let \(key) = hasMany(\(type).self, key: \(literal(key)), using: ForeignKey([\(literal(column.name))]))")
            }
        }
        return lines
    }

    static func bare(_ name: String) -> String { name.hasPrefix("`") ? String(name.dropFirst().dropLast()) : name }

    static func docLines(_ column: Column, resource: Resource, names: [String: String]) -> [String] {
        var lines: [String] = []
        if let comment = column.comment?.trimmingCharacters(in: .whitespacesAndNewlines), !comment.isEmpty {
            lines += comment.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        }
        var facts: [String] = []
        switch column.name {
        case "id": facts.append("The row's id, made offline by `FerryID()`.")
        case "revision": facts.append("The server's revision of the row: nil until it is synced.")
        case "last_modified": facts.append("When the server last changed the row, in milliseconds since 1970: nil until it is synced.")
        default:
            if let target = column.references {
                facts.append(names[target].map { "References ``\($0)``." } ?? (target == "users" ? "A user's id." : "References `\(target)`."))
            }
            if column.name == "rank", resource.ranked == true {
                facts.append("A FerryRank key: nil places a new row last (`store.insert`); move rows with `store.move`.")
            }
            if !column.writable {
                facts.append("Set by the server.")
            } else if column.updatable == false {
                facts.append("Set when the row is created; read-only once the server has it.")
            }
            if !column.nullable, column.hasDefault == true, column.writable {
                facts.append("The server fills it when left nil.")
            }
            let domain = column.baseType.map { $0 == column.type ? "" : " (a domain over `\($0)`)" } ?? ""
            facts.append("PostgreSQL `\(column.type)`" + domain + (column.nullable ? "" : ", not null") + ".")
        }
        if !lines.isEmpty, !facts.isEmpty { lines.append("") }
        return lines + [facts.joined(separator: " ")]
    }

    /// The Swift type of a column: optional when the server may send null or
    /// fills it itself (a row made offline has nil there until synced).
    static func swiftType(_ column: Column, resource: Resource, names: [String: String]) -> String {
        if column.name == "id" { return "FerryID<\(names[resource.name]!)>" }
        let optional = column.nullable || column.hasDefault == true || syncColumns.contains(column.name) || !column.writable
        return base(column, names: names) + (optional ? "?" : "")
    }

    static func base(_ column: Column, names: [String: String]) -> String {
        if let target = column.references {
            if let type = names[target] { return "FerryID<\(type)>" }
            if target == "users" { return "FerryID<FerryUser>" }
        }
        if column.name == "revision" || column.name == "last_modified" { return "Int64" }
        return scalar(column.baseType ?? column.type)
    }

    static func scalar(_ type: String) -> String {
        let type = type.lowercased()
        if type.hasSuffix("[]") { return "[\(scalar(String(type.dropLast(2))))]" }
        switch type {
        case "smallint", "integer": return "Int"
        case "bigint": return "Int64"
        case "real", "double precision": return "Double"
        case let numeric where numeric.hasPrefix("numeric"): return "Double"
        case "boolean": return "Bool"
        case "json", "jsonb": return "JSONValue"
        default: return "String"
        }
    }

    /// `study_sets` -> `StudySet`, `"Odd Things"` -> `OddThing`.
    static func typeName(_ resource: String) -> String {
        let words = words(resource)
        guard let last = words.last else { return "Resource" }
        let singular = words.dropLast() + [singularize(last)]
        let name = singular.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        return name.first?.isLetter == true ? name : "Resource" + name
    }

    /// A name's words: what lies between underscores, spaces and every other character
    /// that cannot stand in a Swift identifier. A table or column may be named
    /// `"Odd Things"`; split at underscores only, it made `struct Odd Thing` (no Swift)
    /// and a property `odd_Name`.
    static func words(_ name: String) -> [String] {
        name.split(whereSeparator: { !($0.isLetter || $0.isNumber) }).map(String.init)
    }

    static func singularize(_ word: String) -> String {
        if word.hasSuffix("ies"), word.count > 3 { return String(word.dropLast(3)) + "y" }
        for ending in ["sses", "shes", "ches", "xes"] where word.hasSuffix(ending) { return String(word.dropLast(2)) }
        if word.hasSuffix("ss") || word.hasSuffix("us") || word.hasSuffix("is") { return word }
        if word.hasSuffix("s"), word.count > 1 { return String(word.dropLast()) }
        return word
    }

    /// `set_id` -> `setID`, `last_modified` -> `lastModified`, `"Due Date"` -> `dueDate`;
    /// Swift keywords in backticks.
    static func property(_ column: String) -> String {
        let words = words(column)
        var name = ""
        for (index, word) in words.enumerated() {
            if word.lowercased() == "id" || word.lowercased() == "url" {
                name += index == 0 ? word.lowercased() : word.uppercased()
            } else {
                name += index == 0 ? word.prefix(1).lowercased() + word.dropFirst() : word.prefix(1).uppercased() + word.dropFirst()
            }
        }
        if name.isEmpty || !(name.first!.isLetter || name.first == "_") { name = "_" + name }
        name = String(name.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        return keywords.contains(name) ? "`\(name)`" : name
    }

    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout", "internal", "let",
        "open", "operator", "private", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var", "break",
        "case", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch",
        "where", "while", "as", "Any", "catch", "false", "is", "nil", "super", "self", "Self", "throw", "throws", "true", "try",
        "Type", "Protocol",
    ]

    static func literal(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
