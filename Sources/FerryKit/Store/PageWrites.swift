import GRDB

/// What applying one page of server rows looks up once, not once a row: each
/// resource's schema entry (read from the store's stored schema), and the
/// upsert statement for the columns its rows bring (the rows of one resource in
/// a page nearly always bring the same ones). Building that statement's SQL
/// for each row was a tenth of a stream page's CPU (bench/public-sets/README.md,
/// stop 16). Lives for one page's transaction.
final class PageWrites {
    private var resources: [String: ServerSchema.Resource] = [:]
    private var upserts: [String: (columns: [String], statement: Statement)] = [:]

    /// The resource `name` of the store's schema (``FerryStore/resource(_:_:)``).
    func resource(_ db: Database, _ name: String) throws -> ServerSchema.Resource {
        if let known = resources[name] { return known }
        let resource = try FerryStore.resource(db, name)
        resources[name] = resource
        return resource
    }

    /// The upsert of `columns` into `table`: the last one made for the table if
    /// it wrote the same columns, else `make()`'s.
    func upsert(_ table: String, columns: [String], make: () throws -> Statement) throws -> Statement {
        if let last = upserts[table], last.columns == columns { return last.statement }
        let statement = try make()
        upserts[table] = (columns, statement)
        return statement
    }
}
