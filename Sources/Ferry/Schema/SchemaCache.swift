import FerryBase

/// The catalog currently in force, swapped whole on reload (SIGHUP), so a
/// request always sees one consistent version.
///
/// Every request reads it; only a reload writes, so readers share the lock.
public final class SchemaCache: Sendable {
    private let current: Locked<SchemaCatalog>

    /// A cache holding `catalog`.
    public init(_ catalog: SchemaCatalog) { current = Locked(catalog) }

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
