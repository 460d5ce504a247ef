/// `ferry.schema_migrations` from before Ferry's schema and the app's were split into
/// two tracks, and how it is divided between them.
///
/// Until then `migrations/` held Ferry's own files and the study app's in one numbered
/// sequence (0001–0015), recorded in one history. Ferry's files keep their versions in
/// the core track; the study app's now live in `examples/study/migrations` under the same
/// versions. So a row of one of Ferry's versions stays core (its checksum must be the
/// built-in file's), and every other row (the study app's, or a fork's own) moves to the
/// app track as it is: no file is applied again, and a fork's edited or added files stay
/// recorded under their own names.
///
/// Two files held both: 0004_changes.sql and 0015_read_through_scope.sql ended with the
/// study app's part. Their rows become two, each keeping when it was applied: the core
/// file as built in, and the study app's part under the name and checksum of its file in
/// `examples/study/migrations` (both frozen below; a test checks them against the files).
///
/// Pure: rows in, rows and the changes to make out.
public enum LegacyHistory {
    /// A file that held Ferry's part and the study app's.
    struct Divided: Sendable, Equatable {
        /// Its version in both tracks.
        var version: Int
        /// The checksum the one sequence recorded for the whole file.
        var legacyChecksum: String
        /// The study app's part, in `examples/study/migrations`.
        var appName: String
        var appChecksum: String
    }

    /// The versions of Ferry's own files in the one sequence: 0001–0015 but the study
    /// app's 0002, 0005, 0013 and 0014. A later core file's version can be a fork's own
    /// file in an old history, so only these are compared with the built-in files.
    static let legacyCoreVersions: Set<Int> = [1, 3, 4, 6, 7, 8, 9, 10, 11, 12, 15]

    /// The two files that held both parts, as they were shipped.
    static let dividedFiles: [Divided] = [
        Divided(
            version: 4, legacyChecksum: "36dad2877476267bc7b94c6a56cbf2c7554e3e673e1dbd71e3e3dba88b36a7aa",
            appName: "0004_study_access_scope.sql",
            appChecksum: "254c1dd29d527d388f0a33dcc962fb17c46e01e62ee3974d5025d3baa7116ecf"),
        Divided(
            version: 15, legacyChecksum: "c609c96942839980d1243bd311570617084b8ef7ba182ed5fe4c969425262e2c",
            appName: "0015_study_read_through_scope.sql",
            appChecksum: "ab03c896c1aa60c9b70cb56ef28ab4d1e62cb0d442858f2ade7382a09f14e8fb"),
    ]

    /// What dividing a legacy history does.
    public struct Split: Sendable, Equatable {
        /// The rows as they will be: core first, each track by version.
        public var rows: [AppliedMigration]
        /// Versions whose row moves to the app track unchanged.
        var movedToApp: [Int]
        /// Rows that become a core row and an app row.
        var divided: [Part]

        struct Part: Sendable, Equatable {
            var version: Int
            var coreName: String
            var coreChecksum: String
            var appName: String
            var appChecksum: String
        }
    }

    /// Divides `legacy` (rows of the one sequence) between the tracks, given the core
    /// files built into this binary.
    ///
    /// - Throws: `MigrationError.legacyHistory` for a row with a core file's version but
    ///   not its checksum (nor a divided file's): a changed copy of a Ferry file, whose
    ///   parts Ferry cannot tell apart.
    public static func split(_ legacy: [AppliedMigration], core: [MigrationFile]) throws(MigrationError) -> Split {
        let coreByVersion = Dictionary(core.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
        var coreRows: [AppliedMigration] = []
        var appRows: [AppliedMigration] = []
        var movedToApp: [Int] = []
        var divided: [Split.Part] = []
        for row in legacy {
            guard legacyCoreVersions.contains(row.version), let file = coreByVersion[row.version] else {
                appRows.append(moved(row, to: .app))
                movedToApp.append(row.version)
                continue
            }
            if row.checksum == file.checksum {
                coreRows.append(moved(row, to: .core))
            } else if let both = dividedFiles.first(where: { $0.version == row.version && $0.legacyChecksum == row.checksum }) {
                var coreRow = moved(row, to: .core)
                coreRow.fileName = file.fileName
                coreRow.checksum = file.checksum
                var appRow = moved(row, to: .app)
                appRow.fileName = both.appName
                appRow.checksum = both.appChecksum
                coreRows.append(coreRow)
                appRows.append(appRow)
                divided.append(
                    .init(
                        version: row.version, coreName: file.fileName, coreChecksum: file.checksum,
                        appName: both.appName, appChecksum: both.appChecksum))
            } else {
                throw .legacyHistory(fileName: row.fileName, version: row.version, checksum: row.checksum)
            }
        }
        let byVersion = { (a: AppliedMigration, b: AppliedMigration) in a.version < b.version }
        return Split(
            rows: coreRows.sorted(by: byVersion) + appRows.sorted(by: byVersion),
            movedToApp: movedToApp, divided: divided)
    }

    private static func moved(_ row: AppliedMigration, to track: MigrationTrack) -> AppliedMigration {
        var row = row
        row.track = track
        return row
    }
}
