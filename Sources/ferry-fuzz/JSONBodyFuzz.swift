import Ferry
import FerryRank
import Foundation

/// A write body, through the byte-level passes Ferry makes before PostgreSQL parses
/// it: `BodyScan` (shape, item count, depth), `ObjectMembers` and `FieldPrecheck` (top-level
/// keys and value types, for the fast PATCH path) and `RankScan` (literal rank keys). Foundation's
/// JSON parser is the oracle.
///
/// Properties:
/// - a document Foundation reads as an object or array, at most 64 deep, passes
///   BodyScan with the same shape and item count (no valid body is refused);
/// - a refusal is a 400 `invalid_json`;
/// - an object without escapes that Foundation reads has the same keys and value
///   types in ObjectMembers, and every member's ranges lie inside the body;
/// - FieldPrecheck passes no PATCH or PUT body that FieldValidation would fail
///   (``FieldPrecheckCheck``);
/// - RankScan says `none` only if no object in the document has a `rank` key, and
///   `none` or `valid` only if every `rank` is a valid literal key (`first` and `last`
///   excluded): what lets the rank rewriter skip the full parse.
enum JSONBodyFuzz {
    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        let scan: BodyScan?
        do {
            scan = try BodyScan(bytes)
        } catch {
            let problem = error as? Problem
            require(problem?.status == 400 && problem?.code == .invalidJson, "BodyScan threw \(error)")
            scan = nil
        }
        let members = ObjectMembers(bytes)
        if let members {
            checkRanges(members, in: bytes)
            FieldPrecheckCheck.check(members, in: bytes)
        }
        let rankScan = RankScan(bytes)

        // Foundation takes `[1,]` and `{"a":1,}`, which JSON (and PostgreSQL) do not.
        // Foundation guesses UTF-16 and UTF-32 from NULs and byte order marks; the server takes UTF-8 only.
        guard !bytes.contains(0), bytes.first != 0xEF, bytes.first != 0xFE, bytes.first != 0xFF,
            !hasTrailingComma(bytes), let document = try? JSONSerialization.jsonObject(with: Data(bytes))
        else { return }

        if depth(document) <= BodyScan.maxDepth {
            if let object = document as? [String: Any] {
                require(scan?.top == .object, "a valid object was refused or misread")
                if !bytes.contains(0x5C) { checkMembers(members, object, in: bytes) }
            } else if let array = document as? [Any] {
                require(scan?.top == .array && scan?.count == array.count, "a valid array of \(array.count) was read as \(scan as Any)")
            }
        }
        let ranks = rankValues(document)
        switch rankScan {
        case .none: require(ranks.isEmpty, "RankScan found no rank in a body with \(ranks.count)")
        case .valid:
            // Not required: a rank among the keys. `"\"rank": "V"` reads as one to the byte scan,
            // and callers only ask whether to parse, so a false `valid` without ranks is harmless.
            for rank in ranks {
                let key = rank as? String
                require(key != nil && key != "first" && key != "last" && (try? Rank.validate(key ?? "")) != nil, "RankScan passed \(rank)")
            }
        case .needsParse: break
        }
    }

    static func checkRanges(_ members: ObjectMembers, in bytes: [UInt8]) {
        for member in members.members {
            require(member.key.lowerBound >= 1 && member.key.upperBound < bytes.count, "key range \(member.key)")
            require(bytes[member.key.lowerBound - 1] == 0x22 && bytes[member.key.upperBound] == 0x22, "a key not between quotes")
            switch member.value {
            case .string(let range, _):
                require(range.lowerBound >= 1 && range.upperBound < bytes.count, "string range \(range)")
                require(bytes[range.lowerBound - 1] == 0x22 && bytes[range.upperBound] == 0x22, "a string not between quotes")
            case .number(let range):
                require(!range.isEmpty && range.upperBound <= bytes.count, "number range \(range)")
            default: break
            }
        }
    }

    static func checkMembers(_ members: ObjectMembers?, _ object: [String: Any], in bytes: [UInt8]) {
        guard let members else { return require(false, "a valid object without escapes was not read") }
        var kinds: [String: ObjectMembers.Value] = [:]
        for member in members.members {
            // jsonb and Foundation both keep the last of a repeated key.
            kinds[String(decoding: bytes[member.key], as: UTF8.self)] = member.value
        }
        require(Set(kinds.keys) == Set(object.keys), "keys \(kinds.keys.sorted()) vs \(object.keys.sorted())")
        for (key, value) in object {
            let matches: Bool
            switch kinds[key] {
            case .string: matches = value is String || value is NSString
            case .number, .boolean: matches = value is NSNumber || value is Bool || value is Int || value is Double
            case .null: matches = value is NSNull
            case .object: matches = value is [String: Any] || value is NSDictionary
            case .array: matches = value is [Any] || value is NSArray
            case nil: matches = false
            }
            require(matches, "member \(key.debugDescription) read as \(kinds[key] as Any), Foundation has \(type(of: value))")
        }
    }

    /// Whether a `,` outside strings is followed, after whitespace, by `]` or `}`.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        var inString = false, escaped = false, afterComma = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
                continue
            }
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case 0x5D, 0x7D: if afterComma { return true }
            case 0x22: inString = true
            default: break
            }
            afterComma = byte == 0x2C
        }
        return false
    }

    /// Nesting depth: a scalar is 0, `[]` is 1.
    static func depth(_ value: Any) -> Int {
        if let array = value as? [Any] { return 1 + (array.map(depth).max() ?? 0) }
        if let object = value as? [String: Any] { return 1 + (object.values.map(depth).max() ?? 0) }
        return 0
    }

    /// The value of every `rank` key at any depth.
    static func rankValues(_ value: Any) -> [Any] {
        if let array = value as? [Any] { return array.flatMap(rankValues) }
        guard let object = value as? [String: Any] else { return [] }
        return (object["rank"].map { [$0] } ?? []) + object.values.flatMap(rankValues)
    }
}
