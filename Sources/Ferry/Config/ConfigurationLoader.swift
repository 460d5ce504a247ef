import Foundation

/// Builds a ``FerryConfiguration`` from defaults, an optional JSON file, and
/// `FERRY_*` environment variables, in that order of precedence (lowest first).
///
/// Strict on purpose: an unknown key, a wrong type or an out-of-range value
/// is an error naming the key, so a typo in production config cannot silently
/// fall back to a default.
public enum ConfigurationLoader {
    /// Loads the configuration.
    /// - Parameters:
    ///   - path: a JSON file, or nil for defaults plus environment.
    ///   - environment: the process environment (injectable for tests).
    public static func load(
        path: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationError) -> FerryConfiguration {
        var config = FerryConfiguration()
        if let path {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ConfigurationError(key: path, reason: "cannot read the file (\(error.localizedDescription))")
            }
            try apply(json: data, source: path, to: &config)
        }
        try applyEnvironment(environment, to: &config)
        try validate(config)
        return config
    }

    /// Applies a JSON document's keys on top of `config`.
    static func apply(json data: Data, source: String, to config: inout FerryConfiguration) throws(ConfigurationError) {
        let root: JSONConfigValue
        do {
            root = try JSONDecoder().decode(JSONConfigValue.self, from: data)
        } catch {
            throw ConfigurationError(key: source, reason: "not valid JSON (\(describe(error)))")
        }
        guard case .object(let sections) = root else {
            throw ConfigurationError(key: source, reason: "the top level must be a JSON object")
        }
        let keys = Dictionary(uniqueKeysWithValues: ConfigurationKey.all.map { ($0.name, $0) })
        func refuse(_ key: String, _ reason: String) -> ConfigurationError {
            ConfigurationError(key: key, reason: reason, file: source)
        }
        for (sectionName, sectionValue) in sections.sorted(by: { $0.key < $1.key }) {
            guard keys.keys.contains(where: { $0.hasPrefix(sectionName + ".") }) else {
                throw refuse(sectionName, "unknown key")
            }
            guard case .object(let members) = sectionValue else {
                throw refuse(sectionName, "expected an object")
            }
            for (member, value) in members.sorted(by: { $0.key < $1.key }) {
                let name = sectionName + "." + member
                guard let key = keys[name] else { throw refuse(name, "unknown key") }
                guard let converted = value.configurationValue(for: key.kind) else {
                    throw refuse(name, "expected \(article(key.kind))")
                }
                if let reason = key.store(&config, converted) { throw refuse(name, reason) }
            }
        }
    }

    /// Applies `FERRY_<SECTION>_<KEY>` variables. A variable that names a section
    /// (`FERRY_LISTEN_…`) but no key of it is an error, as an unknown key in a file is:
    /// `FERRY_LISTEN_PROT` fell back to port 8080 without a word. Others are left
    /// alone, since `FERRY_` also prefixes tooling variables (`FERRY_PG_PORT`, `FERRY_TEST_…`).
    static func applyEnvironment(_ environment: [String: String], to config: inout FerryConfiguration) throws(ConfigurationError) {
        let known = Set(ConfigurationKey.all.map(\.environmentVariable))
        let sections = Set(ConfigurationKey.all.map { "FERRY_" + ($0.name.split(separator: ".").first ?? "").uppercased() + "_" })
        for variable in environment.keys.sorted() where variable.hasPrefix("FERRY_") && !known.contains(variable) {
            guard let section = sections.first(where: { variable.uppercased().hasPrefix($0) }) else { continue }
            let near = known.filter { $0.hasPrefix(section) }.min { EditDistance.between($0, variable) < EditDistance.between($1, variable) }
            let hint = near.flatMap { EditDistance.between($0, variable) <= 3 ? "; did you mean \($0)?" : nil } ?? ""
            throw ConfigurationError(key: variable, reason: "no configuration key is set by this variable\(hint)")
        }
        for key in ConfigurationKey.all {
            let variable = key.environmentVariable
            guard let raw = environment[variable] else { continue }
            guard let value = parseEnvironment(raw, kind: key.kind) else {
                throw ConfigurationError(key: variable, reason: "expected \(article(key.kind)), got \"\(raw)\"")
            }
            if let reason = key.store(&config, value) { throw ConfigurationError(key: variable, reason: reason) }
        }
    }

    /// Checks that hold across keys.
    static func validate(_ config: FerryConfiguration) throws(ConfigurationError) {
        if config.paging.defaultLimit > config.paging.maxLimit {
            throw ConfigurationError(key: "paging.default_limit", reason: "must not exceed paging.max_limit")
        }
        for server in config.memcached.servers where MemcachedAddress(server) == nil {
            throw ConfigurationError(
                key: "memcached.servers", reason: "\"\(server)\" is not host:port (a hostname, an IPv4 address or [an IPv6 one]; one server an entry)"
            )
        }
        if !config.auth.builtinTokens, config.auth.jwtProviders.isEmpty {
            throw ConfigurationError(key: "auth.builtin_tokens", reason: "false needs at least one provider in auth.jwt_providers")
        }
        for origin in config.cors.allowedOrigins where origin.isEmpty || origin.contains(" ") {
            throw ConfigurationError(key: "cors.allowed_origins", reason: "\"\(origin)\" is not an origin")
        }
    }

    static func parseEnvironment(_ raw: String, kind: ConfigurationKey.Kind) -> ConfigurationValue? {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        switch kind {
        case .integer: return Int(trimmed).map { .integer($0) }
        case .number: return Double(trimmed).map { .number($0) }
        case .boolean:
            switch trimmed.lowercased() {
            case "true", "1", "yes", "on": return .boolean(true)
            case "false", "0", "no", "off": return .boolean(false)
            default: return nil
            }
        case .string: return .string(raw)
        case .objectList: return .json(raw)
        case .stringList:
            return .stringList(
                trimmed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty })
        }
    }

    private static func article(_ kind: ConfigurationKey.Kind) -> String {
        kind == .integer ? "an integer" : "a \(kind.rawValue)"
    }

    private static func describe(_ error: Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            return (context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription
        }
        return String(describing: error)
    }
}

/// `host:port` with a port number, as memcached servers are written.
struct MemcachedAddress {
    let host: String
    let port: Int

    init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65_535).contains(port)
        else { return nil }
        host = String(text[..<colon])
        self.port = port
        // A hostname or IPv4 address, or an IPv6 one in brackets: anything else ("a:1;b:2",
        // "memcached://h:1", a space) passed here and failed at start with libmemcached's
        // words about IPv6. `_` stays: container names (ferry_memcached_1) resolve with it;
        // `%` too, for a scoped IPv6 address ([fe80::1%eth0]).
        let name = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_".unicodeScalars)
        let v6 = Set("0123456789abcdefABCDEF:.%abcdefghijklmnopqrstuvwxyz".unicodeScalars)
        if host.hasPrefix("["), host.hasSuffix("]"), host.count > 2 {
            guard host.dropFirst().dropLast().unicodeScalars.allSatisfy(v6.contains) else { return nil }
        } else if host.isEmpty || !host.unicodeScalars.allSatisfy(name.contains) {
            return nil
        }
    }
}
