import Foundation
import Testing
@testable import Ferry

@Suite struct ConfigurationLoaderTests {
    private func load(_ json: String, env: [String: String] = [:]) throws(ConfigurationError) -> FerryConfiguration {
        var config = FerryConfiguration()
        try ConfigurationLoader.apply(json: Data(json.utf8), source: "test.json", to: &config)
        try ConfigurationLoader.applyEnvironment(env, to: &config)
        try ConfigurationLoader.validate(config)
        return config
    }

    @Test func defaultsNeedNoFile() throws {
        let config = try ConfigurationLoader.load(path: nil, environment: [:])
        #expect(config == FerryConfiguration())
        #expect(config.paging.tokenTTLSeconds == 300)
        #expect(config.idempotency.ttlHours == 24)
    }

    @Test func fileValuesApply() throws {
        let config = try load(#"{"listen": {"port": 9000}, "limits": {"header_timeout_seconds": 2.5}, "memcached": {"servers": ["a:1", "b:2"]}}"#)
        #expect(config.listen.port == 9000)
        #expect(config.limits.headerTimeoutSeconds == 2.5)
        #expect(config.memcached.servers == ["a:1", "b:2"])
    }

    /// The answer timeout outlasts the statement timeout (raised to 5 s past it), unless
    /// either is off: a configuration written before the key, with a long statement
    /// timeout, still starts.
    @Test func anAnswerTimeoutOutlastsTheStatementTimeout() throws {
        #expect(try load(#"{"database": {"statement_timeout_ms": 0}}"#).database.answerTimeout == .seconds(15))
        #expect(try load(#"{"database": {"answer_timeout_ms": 0, "statement_timeout_ms": 60000}}"#).database.answerTimeout == nil)
        #expect(try load(#"{"database": {"statement_timeout_ms": 30000}}"#).database.answerTimeout == .seconds(35))
        #expect(try load(#"{"database": {"answer_timeout_ms": 4000, "statement_timeout_ms": 1000}}"#).database.answerTimeout == .seconds(6))
        #expect(
            try load(#"{"database": {"answer_timeout_ms": 65000, "statement_timeout_ms": 60000}}"#).database.answerTimeout
                == .seconds(65))
    }

    @Test func environmentOverridesFile() throws {
        let config = try load(
            #"{"listen": {"port": 9000}}"#,
            env: [
                "FERRY_LISTEN_PORT": "9100", "FERRY_DATABASE_URL": "postgresql://x@y/z",
                "FERRY_MEMCACHED_SERVERS": "h1:11211, h2:11212", "FERRY_AUTH_ALLOW_SIGNUP": "true",
                "FERRY_TEST_SOMETHING": "ignored",
            ])
        #expect(config.listen.port == 9100)
        #expect(config.database.url == "postgresql://x@y/z")
        #expect(config.memcached.servers == ["h1:11211", "h2:11212"])
        #expect(config.auth.allowSignup)
    }

    @Test(arguments: [
        (#"{"limits": {"max_bodyx": 1}}"#, "limits.max_bodyx", "unknown key"),
        (#"{"nonsense": {}}"#, "nonsense.", ""),
        (#"{"limits": {"max_body_bytes": "10"}}"#, "limits.max_body_bytes", "expected an integer"),
        (#"{"limits": {"max_body_bytes": 1.5}}"#, "limits.max_body_bytes", "expected an integer"),
        (#"{"auth": {"allow_signup": 1}}"#, "auth.allow_signup", "expected a boolean"),
        (#"{"listen": {"port": 70000}}"#, "listen.port", "between"),
        (#"{"listen": 5}"#, "listen", "expected an object"),
        (#"{"logging": {"format": "xml"}}"#, "logging.format", "one of"),
        (#"{"memcached": {"servers": ["nohost"]}}"#, "memcached.servers", "host:port"),
        (#"{"memcached": {"servers": ["127.0.0.1:11480;127.0.0.1:11481"]}}"#, "memcached.servers", "host:port"),
        (#"{"memcached": {"servers": ["a:1 b:2"]}}"#, "memcached.servers", "host:port"),
        (#"{"memcached": {"servers": ["memcached://127.0.0.1:11480"]}}"#, "memcached.servers", "host:port"),
        (#"{"memcached": {"servers": ["::1:11211"]}}"#, "memcached.servers", "host:port"),
        (#"{"memcached": {"servers": [1]}}"#, "memcached.servers", "list of strings"),
        (#"{"paging": {"default_limit": 500, "max_limit": 100}}"#, "paging.default_limit", "max_limit"),
        (#"[1]"#, "test.json", "object"),
        (#"{"limits": {"#, "test.json", "not valid JSON"),
    ])
    func badConfigurationNamesTheKey(json: String, key: String, reason: String) {
        do {
            _ = try load(json)
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.key.hasPrefix(key.hasSuffix(".") ? String(key.dropLast()) : key), "\(error)")
            #expect(reason.isEmpty || error.reason.contains(reason), "\(error)")
        }
    }

    @Test func aFilesBadKeyNamesTheFileToo() {
        #expect(throws: ConfigurationError(key: "listen.port", reason: "expected an integer", file: "test.json")) {
            _ = try load(#"{"listen": {"port": "x"}}"#)
        }
        let error = ConfigurationError(key: "listen.port", reason: "expected an integer", file: "/etc/ferry.json")
        #expect(error.description == "configuration error: /etc/ferry.json: listen.port: expected an integer")
    }

    /// A variable of a section that sets no key was ignored: FERRY_LISTEN_PROT served on 8080.
    @Test func aMistypedVariableOfASectionNamesItAndTheKeyMeant() {
        for (variable, meant) in [
            ("FERRY_LISTEN_PROT", "FERRY_LISTEN_PORT"), ("FERRY_MEMCACHED_SERVER", "FERRY_MEMCACHED_SERVERS"),
            ("FERRY_DATABASE_URl", "FERRY_DATABASE_URL"),
        ] {
            do {
                _ = try load("{}", env: [variable: "x"])
                Issue.record("accepted \(variable)")
            } catch {
                #expect(error.key == variable && error.reason.contains("did you mean \(meant)?"), "\(error)")
            }
        }
        // Tooling variables of no section stay out of it; every key's own variable is read.
        #expect(throws: Never.self) { _ = try load("{}", env: ["FERRY_PG_PORT": "54329", "FERRY_TEST_OWNER_URL": "x", "FERRY_LISTEN_PORT": "9"]) }
        #expect(
            (try? load("{}", env: ["FERRY_MEMCACHED_SERVERS": "[::1]:11211,cache-1.internal:11211,ferry_memcached_1:11211,[fe80::1%eth0]:11211"]))?
                .memcached.servers.count == 4)
    }

    @Test func badEnvironmentValueNamesTheVariable() {
        #expect(throws: ConfigurationError(key: "FERRY_LISTEN_PORT", reason: "expected an integer, got \"abc\"")) {
            _ = try load("{}", env: ["FERRY_LISTEN_PORT": "abc"])
        }
    }

    @Test func unreadableFileIsAnError() {
        #expect(throws: ConfigurationError.self) { _ = try ConfigurationLoader.load(path: "/nonexistent/ferry.json", environment: [:]) }
    }

    /// config.example.json documents every key with its default; it must not drift from the code.
    @Test func exampleFileMatchesTheKeyTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let committed = try String(contentsOf: root.appendingPathComponent("config.example.json"), encoding: .utf8)
        #expect(committed == ConfigurationKey.exampleJSON())
        // And it loads back to the defaults.
        var config = FerryConfiguration()
        try ConfigurationLoader.apply(json: Data(committed.utf8), source: "example", to: &config)
        #expect(config == FerryConfiguration())
    }
}

@Suite struct ConfigurationReferenceTests {
    /// docs/CONFIGURATION.md's reference table is generated; it must not drift from the code.
    @Test func theConfigurationDocCarriesTheCurrentReference() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let document = try String(contentsOf: root.appendingPathComponent("docs/CONFIGURATION.md"), encoding: .utf8)
        #expect(document.contains(ConfigurationKey.referenceMarkdown()))
    }
}
