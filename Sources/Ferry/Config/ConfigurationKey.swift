/// One configuration key: its dotted name, type, and how to store it.
///
/// The table in ``all`` is the single source of truth: the loader accepts
/// exactly these keys, the environment overrides are derived from their
/// names, and `config.example.json` and docs/CONFIGURATION.md list the same set.
public struct ConfigurationKey: Sendable {
    /// The JSON type a key takes.
    public enum Kind: String, Sendable {
        case integer, number, boolean, string, stringList = "list of strings"
        /// JSON objects, each checked by the key itself (`auth.jwt_providers`); the environment holds the JSON text.
        case objectList = "list of objects"
    }

    /// Dotted name, e.g. `database.pool_size`.
    public let name: String
    /// The value's type.
    public let kind: Kind
    /// What the key means, for the reference.
    public let help: String
    /// Stores a validated value; returns a reason when the value is out of range.
    let store: @Sendable (inout FerryConfiguration, ConfigurationValue) -> String?
    /// Reads the current value back (for defaults in docs and `config.example.json`).
    let read: @Sendable (FerryConfiguration) -> ConfigurationValue

    /// The environment variable that overrides the key: `FERRY_` + name in
    /// upper case with dots as underscores (`FERRY_DATABASE_POOL_SIZE`).
    public var environmentVariable: String {
        "FERRY_" + name.uppercased().replacingOccurrences(of: ".", with: "_")
    }
}

public enum ConfigurationValue: Sendable, Equatable {
    case integer(Int), number(Double), boolean(Bool), string(String), stringList([String])
    /// A list of objects, as JSON text.
    case json(String)
}

extension ConfigurationKey {
    static func int(
        _ name: String, _ path: WritableKeyPath<FerryConfiguration, Int> & Sendable, min: Int, max: Int = .max,
        _ help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, kind: .integer, help: help,
            store: { config, value in
                guard case .integer(let v) = value else { return "expected an integer" }
                guard v >= min, v <= max else { return "must be between \(min) and \(max)" }
                config[keyPath: path] = v
                return nil
            }, read: { .integer($0[keyPath: path]) })
    }

    static func seconds(
        _ name: String, _ path: WritableKeyPath<FerryConfiguration, Double> & Sendable, _ help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, kind: .number, help: help,
            store: { config, value in
                let seconds: Double
                switch value {
                case .number(let v): seconds = v
                case .integer(let v): seconds = Double(v)
                default: return "expected a number"
                }
                guard seconds > 0, seconds <= 86_400 else { return "must be greater than 0 and at most 86400" }
                config[keyPath: path] = seconds
                return nil
            }, read: { .number($0[keyPath: path]) })
    }

    static func bool(
        _ name: String, _ path: WritableKeyPath<FerryConfiguration, Bool> & Sendable, _ help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, kind: .boolean, help: help,
            store: { config, value in
                guard case .boolean(let v) = value else { return "expected true or false" }
                config[keyPath: path] = v
                return nil
            }, read: { .boolean($0[keyPath: path]) })
    }

    static func string(
        _ name: String, _ path: WritableKeyPath<FerryConfiguration, String> & Sendable,
        oneOf choices: [String]? = nil, allowEmpty: Bool = false, _ help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, kind: .string, help: help,
            store: { config, value in
                guard case .string(let v) = value else { return "expected a string" }
                if let choices, !choices.contains(v) { return "must be one of \(choices.joined(separator: ", "))" }
                if choices == nil, !allowEmpty, v.isEmpty { return "must not be empty" }
                config[keyPath: path] = v
                return nil
            }, read: { .string($0[keyPath: path]) })
    }

    static func providers(
        _ name: String, _ path: WritableKeyPath<FerryConfiguration, [JWTProvider]> & Sendable, _ help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, kind: .objectList, help: help,
            store: { config, value in
                guard case .json(let text) = value else { return "expected a list of objects" }
                switch JWTProvider.parseList(text) {
                case .success(let providers): config[keyPath: path] = providers
                case .failure(let error): return error.reason
                }
                return nil
            }, read: { .json(JWTProvider.jsonText($0[keyPath: path])) })
    }

    static func list(
        _ name: String, _ path: WritableKeyPath<FerryConfiguration, [String]> & Sendable, allowEmpty: Bool,
        _ help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, kind: .stringList, help: help,
            store: { config, value in
                guard case .stringList(let v) = value else { return "expected a list of strings" }
                if !allowEmpty, v.isEmpty { return "must not be empty" }
                config[keyPath: path] = v
                return nil
            }, read: { .stringList($0[keyPath: path]) })
    }
}
