/// One of the two sequences `ferry migrate` applies, recorded apart in
/// `ferry.schema_migrations` so that each is numbered on its own.
///
/// Core files come first: a new Ferry release brings new core files and applies them
/// over any app's history, then the app's pending files, with no renumbering on
/// either side.
public enum MigrationTrack: String, Sendable, Equatable, CaseIterable {
    /// Ferry's own schema (`ferry`): the files of the repository's `migrations/`,
    /// built into the binary.
    case core
    /// The app's schema: the files of the app's migrations directory (`--dir`, or
    /// `database.migrations_dir`). They may not create or alter objects in schema `ferry`.
    case app
}
