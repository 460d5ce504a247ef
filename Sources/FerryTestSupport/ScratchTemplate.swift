import FerryPostgres
import Foundation

/// A database migrated once per distinct ``ScratchMigrations`` and test binary, that
/// scratch databases are copied from with `CREATE DATABASE … TEMPLATE`: a copy takes about
/// 0.2 s where migrating takes 1.5 to 4 s (bench/ci/README.md), and a run makes hundreds.
///
/// - Named `ferry_tpl_<build>_<set>`: `<build>` is the test binary's modification time in
///   seconds, `<set>` the first 16 hex digits of the migrations' fingerprint, which covers
///   every file's checksum and the binary. Changed files or a rebuilt binary give a new
///   name, so a template of an older migration set is never copied.
/// - Built under `<name>_new` and renamed when complete, so a name that exists is a
///   complete template; built under a session advisory lock in the owner's database, so
///   that parallel test processes and threads build each one once.
/// - Closed to connections (`ALLOW_CONNECTIONS false`): PostgreSQL copies a database only
///   while no session is connected to it.
/// - Templates of older test binaries are dropped when a newer one builds a template; one of
///   a newer binary is never dropped, so two builds that share a cluster (a run beside a
///   thread-sanitizer run) settle after one rebuild each. A copy that finds its template
///   gone builds it again.
/// - Roles are the cluster's, so objects and grants copy as they are: the template is
///   built as the same owner role the copies are created by.
enum ScratchTemplate {
    /// The advisory lock's key: the ASCII bytes of "ferrytpl" (`MigrationLock` uses "ferrymig").
    static let lockKey: Int64 = 0x6665_7272_7974_706C
    static let prefix = "ferry_tpl_"
    static let building = "_new"

    /// False when `FERRY_TEST_SCRATCH_TEMPLATE=0`: every scratch database is then migrated in
    /// place, as before templates (to compare timings, or to rule the template out).
    static let enabled = ProcessInfo.processInfo.environment["FERRY_TEST_SCRATCH_TEMPLATE"] != "0"

    /// The test binary's identity (path, size, modification time, inode) and its
    /// modification time in seconds. A binary that cannot be read gets an identity of its
    /// own, so its templates serve this process alone rather than a later build.
    static let build: (identity: String, stamp: Int) = {
        let path = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970
        else { return ("unknown \(UUID().uuidString)", Int(Date().timeIntervalSince1970)) }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let inode = (attributes[.systemFileNumber] as? NSNumber)?.int64Value ?? 0
        return ("\(path) \(size) \(modified) \(inode)", Int(modified))
    }()

    /// The template's name for `migrations` run as the owner at `ownerURL`.
    static func name(_ migrations: ScratchMigrations, ownerURL: String) -> String {
        let fingerprint = migrations.fingerprint(ownerURL: ownerURL, build: build.identity)
        return prefix + String(build.stamp) + "_" + fingerprint.prefix(16)
    }

    /// Creates database `database` as a copy of the template for `migrations`, building the
    /// template first when it does not exist. `ownerURL` is a role with CREATEDB.
    static func copy(into database: String, _ migrations: ScratchMigrations, ownerURL: String) throws {
        let template = name(migrations, ownerURL: ownerURL)
        let admin = try PostgresConnection(url: ownerURL)
        defer { admin.close() }
        // Names are this file's own (a prefix, digits, hex); utility statements take no binds.
        let create = "CREATE DATABASE \"\(database)\" TEMPLATE \"\(template)\""
        // A newer test binary's build may drop the template between the two; three tries
        // outlast that, as it never drops its own.
        var attempt = 1
        while true {
            do {
                try admin.execute(create)
                return
            } catch {
                guard error.sqlState == "3D000", attempt < 3 else { throw error }
            }
            attempt += 1
            try ensure(template, migrations, ownerURL: ownerURL, on: admin)
        }
    }

    /// Builds `template` unless it exists, holding the lock; then drops older binaries'.
    static func ensure(_ template: String, _ migrations: ScratchMigrations, ownerURL: String, on admin: PostgresConnection) throws {
        _ = try admin.query("SELECT pg_advisory_lock(\(bind: lockKey)::bigint)" as PostgresStatement)
        defer { _ = try? admin.query("SELECT pg_advisory_unlock(\(bind: lockKey)::bigint)" as PostgresStatement) }
        let templates = try existing(on: admin)
        guard !templates.contains(template) else { return }
        // Holding the lock, no one else is building: a `_new` left is a failed build's.
        for leftover in templates where leftover.hasSuffix(building) {
            try admin.execute("DROP DATABASE IF EXISTS \"\(leftover)\" WITH (FORCE)")
        }
        let staging = template + building
        try admin.execute("CREATE DATABASE \"\(staging)\"")
        do {
            try migrations.apply(to: TestEnvironment.url(ownerURL, database: staging))
            try admin.execute("ALTER DATABASE \"\(staging)\" ALLOW_CONNECTIONS false")
            try admin.execute("ALTER DATABASE \"\(staging)\" RENAME TO \"\(template)\"")
        } catch {
            _ = try? admin.execute("DROP DATABASE IF EXISTS \"\(staging)\" WITH (FORCE)")
            throw error
        }
        for old in templates where !old.hasSuffix(building) && (stamp(of: old) ?? .max) < build.stamp {
            // Without FORCE: a copy under way keeps it, and the next build drops it.
            _ = try? admin.execute("DROP DATABASE IF EXISTS \"\(old)\"")
        }
    }

    /// The templates and half-built templates on the cluster.
    static func existing(on admin: PostgresConnection) throws -> [String] {
        try admin.query("SELECT datname FROM pg_catalog.pg_database WHERE starts_with(datname, \(bind: prefix))" as PostgresStatement).rows
            .compactMap { $0["datname"] }
    }

    /// The build stamp in a template's name, or nil when the name is not one.
    static func stamp(of template: String) -> Int? {
        guard template.hasPrefix(prefix) else { return nil }
        return Int(template.dropFirst(prefix.count).prefix { $0 != "_" })
    }
}
