import Synchronization

/// The catalog currently in force, swapped whole on reload (SIGHUP), so a
/// request always sees one consistent version.
public final class SchemaCache: Sendable {
    private let current: Mutex<SchemaCatalog>

    /// A cache holding `catalog`.
    public init(_ catalog: SchemaCatalog) { current = Mutex(catalog) }

    /// The catalog in force now.
    public var catalog: SchemaCatalog { current.withLock { $0 } }

    /// Replaces the catalog; returns whether it changed.
    @discardableResult
    public func replace(with catalog: SchemaCatalog) -> Bool {
        current.withLock { old in
            defer { old = catalog }
            return old != catalog
        }
    }
}
