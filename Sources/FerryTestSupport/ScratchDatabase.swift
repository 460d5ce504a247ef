import Ferry
import FerryMigrations
import FerryPostgres
import Foundation

/// An app's schema a scratch database is migrated to: one of the examples in `examples/`.
public enum ExampleApp: String, Sendable {
    /// The study app (sets, terms, folders, collaborators): what most tests use.
    case study
    /// The to-do app (lists shared with members, ranked todos, private notes).
    case todo

    /// Its migrations directory in the repository.
    public var migrationsDirectory: URL {
        TestEnvironment.repositoryRoot.appendingPathComponent("examples").appendingPathComponent(rawValue)
            .appendingPathComponent("migrations")
    }

    /// Its migrations, as `ferry migrate --dir` reads them.
    public func migrations() throws -> AppMigrations {
        try AppMigrations.load(directory: migrationsDirectory.path)
    }
}

/// A fresh database for one test, with Ferry's migrations and an example app's applied,
/// dropped on `drop()`.
public final class ScratchDatabase: Sendable {
    public let name: String
    /// The owner role's URL for it.
    public let ownerURL: String
    /// The serve role's URL for it.
    public let appURL: String
    /// Where the database was created from (and is dropped through).
    let adminURL: String
    /// The owner role's URL (the name the migration tests use).
    public var url: String { ownerURL }

    /// Creates `<prefix>_<random>` on the shared test cluster with Ferry's migrations and
    /// `app`'s applied, as the owner.
    ///
    /// - Parameter template: true copies a template migrated once per migration set
    ///   (``ScratchTemplate``); false runs the migrator in this database, for tests of
    ///   migrating itself.
    public convenience init(prefix: String = "ferry_t", app: ExampleApp = .study, migrate: Bool = true, template: Bool = true)
        throws
    {
        try self.init(
            ownerBaseURL: try TestEnvironment.ownerURL(), appBaseURL: try TestEnvironment.appURL(),
            prefix: prefix, migrations: migrate ? try .example(app) : nil, template: template)
    }

    /// Creates `<prefix>_<random>` on the shared test cluster with Ferry's migrations and an
    /// app's written inline (file name to SQL), for a schema a test makes up.
    public convenience init(prefix: String = "ferry_t", appFiles: [String: String], template: Bool = true) throws {
        try self.init(
            ownerBaseURL: try TestEnvironment.ownerURL(), appBaseURL: try TestEnvironment.appURL(),
            prefix: prefix, migrations: try .inline(appFiles), template: template)
    }

    /// A migrated scratch database on a private cluster, whose two Ferry
    /// roles (owner and app, as deploy/local.sh makes them) are created first.
    /// Migrated in place: a template would serve this one database only.
    public convenience init(on cluster: TemporaryPostgres) throws {
        let superuser = try PostgresConnection(url: cluster.url)
        defer { superuser.close() }
        try superuser.execute("CREATE ROLE ferry_owner LOGIN CREATEDB; CREATE ROLE ferry_app LOGIN NOBYPASSRLS")
        let base = "postgresql://%@@127.0.0.1:\(cluster.port)/postgres"
        try self.init(
            ownerBaseURL: String(format: base, "ferry_owner"), appBaseURL: String(format: base, "ferry_app"),
            migrations: try .example(.study), template: false)
    }

    /// Creates `<prefix>_<random>` through `ownerBaseURL` (a role with CREATEDB) and, when
    /// asked, migrates it with `ferry migrate`'s own migrator, so test databases look like
    /// real ones: in place, or by copying the template built once for `migrations`.
    public init(
        ownerBaseURL: String, appBaseURL: String, prefix: String = "ferry_t", migrations: ScratchMigrations?,
        template: Bool = true
    ) throws {
        name = prefix + "_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        ownerURL = TestEnvironment.url(ownerBaseURL, database: name)
        appURL = TestEnvironment.url(appBaseURL, database: name)
        adminURL = ownerBaseURL
        if let migrations, template, ScratchTemplate.enabled {
            try ScratchTemplate.copy(into: name, migrations, ownerURL: ownerBaseURL)
            return
        }
        let admin = try PostgresConnection(url: ownerBaseURL)
        defer { admin.close() }
        try admin.execute("CREATE DATABASE \"\(name)\"")
        if let migrations { try migrations.apply(to: ownerURL) }
    }

    /// An empty scratch database (no migrations), for tests of the migrator itself.
    public static func create(prefix: String = "ferry_mig") throws -> ScratchDatabase {
        try ScratchDatabase(prefix: prefix, migrate: false)
    }

    /// A new owner-role connection; close it when done. `applicationName` names its
    /// session (a test's listener named as an instance's, `ferry-listen`, counts as one).
    public func connect(applicationName: String? = nil) throws -> PostgresConnection {
        try PostgresConnection(url: ownerURL, applicationName: applicationName)
    }

    /// The values of a one-column query, as the owner (the first column, when
    /// there are more).
    public func column(_ sql: String) throws -> [String?] {
        let connection = try connect()
        defer { connection.close() }
        let result = try connection.query(sql)
        guard let name = result.columns.first else { return [] }
        let values = try result.column(name, as: String.self)
        return try result.rows.map { try $0.decode(values) }
    }

    /// Applies Ferry's migrations and `app`'s with the same migrator `ferry migrate` uses.
    public func applyMigrations(app: ExampleApp = .study) throws {
        try ScratchMigrations.example(app).apply(to: ownerURL)
    }

    /// Applies Ferry's migrations and an app's written inline (file name to SQL), as
    /// `ferry migrate` would apply them from a directory; for a schema a test makes up.
    public func applyMigrations(appFiles: [String: String]) throws {
        try ScratchMigrations.inline(appFiles).apply(to: ownerURL)
    }

    /// Drops the database, disconnecting anyone still on it.
    public func drop() {
        guard let admin = try? PostgresConnection(url: adminURL) else { return }
        defer { admin.close() }
        _ = try? admin.execute("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
    }
}
