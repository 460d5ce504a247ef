import Foundation
import GRDB

/// The check of a ``FerryRecord`` type against its resource, made when the
/// store first uses the type and again only when the server's schema of the
/// resource changes.
enum RecordCheck {
    /// The problem of `shape` against `resource`, or nil when it fits:
    /// - every property is a column;
    /// - every property's Swift type holds what its column holds;
    /// - a column the server may send as null is an optional property;
    /// - every column a create must set (not null, no default) is a property.
    static func problem(_ shape: RecordShape, _ resource: ServerSchema.Resource, ranked: Bool = false) -> String? {
        if ranked, resource.ranked != true || resource.column("rank") == nil {
            return "it is a FerryRankedRecord, but \(resource.name) has no ranks"
        }
        for field in shape.fields {
            guard let column = resource.column(field.key) else {
                return "its property \"\(field.key)\" is not a column of \(resource.name) (columns: "
                    + resource.columns.map(\.name).joined(separator: ", ") + ")"
            }
            if !RecordShape.fits(field.kind, ColumnType(column.valueType)) {
                return "its property \"\(field.key)\" is \(RecordShape.describe(field.kind)), but \(resource.name).\(column.name) "
                    + "is \(column.type) on the server"
            }
            if column.nullable, !field.optional {
                return "\(resource.name).\(column.name) may be null on the server, so its property \"\(field.key)\" must be optional"
            }
        }
        guard shape.complete else { return nil }
        let keys = Set(shape.fields.map(\.key))
        if let missing = resource.columns.first(where: { WriteCheck.required($0) && !keys.contains($0.name) }) {
            return "\(resource.name).\(missing.name) must be set when a row is created, and it has no property for it"
        }
        return nil
    }

    /// Types already found to fit, with the resource they fit.
    static let fitting = FittingTypes()

    /// The shapes read so far, by type.
    static let shapes = FittingTypes.Shapes()
}

/// The record types known to fit their resources, so the check runs once per
/// type and schema, not once per call.
///
/// `@unchecked Sendable`: its mutable state is only touched under `lock`
/// (`Synchronization.Mutex` would need macOS 15; FerryKit supports 14).
final class FittingTypes: @unchecked Sendable {
    private let lock = NSLock()
    private var checked: [ObjectIdentifier: ServerSchema.Resource] = [:]

    func fits(_ type: Any.Type, _ resource: ServerSchema.Resource) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return checked[ObjectIdentifier(type)] == resource
    }

    func remember(_ type: Any.Type, _ resource: ServerSchema.Resource) {
        lock.lock()
        defer { lock.unlock() }
        checked[ObjectIdentifier(type)] = resource
    }

    /// `@unchecked Sendable` for the same reason as its outer type.
    final class Shapes: @unchecked Sendable {
        private let lock = NSLock()
        private var shapes: [ObjectIdentifier: RecordShape] = [:]

        func shape<T: Decodable>(_ type: T.Type) -> RecordShape {
            lock.lock()
            if let shape = shapes[ObjectIdentifier(type)] {
                lock.unlock()
                return shape
            }
            lock.unlock()
            // Outside the lock: decoding runs the app's code.
            let shape = RecordShape.of(type)
            lock.lock()
            shapes[ObjectIdentifier(type)] = shape
            lock.unlock()
            return shape
        }
    }
}

extension FerryStore {
    /// The resource of record type `T`, checked (``RecordCheck``) on first use.
    static func resource<T: FerryRecord>(for type: T.Type, _ db: Database) throws -> ServerSchema.Resource {
        guard let resource = try schema(db)?[T.resource] else {
            throw FerryKitError.recordMismatch(
                record: "\(T.self)", resource: T.resource,
                problem: "the server has no such resource (or the store has not synced its schema yet)")
        }
        guard !RecordCheck.fitting.fits(T.self, resource) else { return resource }
        if let problem = RecordCheck.problem(RecordCheck.shapes.shape(T.self), resource, ranked: T.self is any FerryRankedRecord.Type) {
            throw FerryKitError.recordMismatch(record: "\(T.self)", resource: T.resource, problem: problem)
        }
        RecordCheck.fitting.remember(T.self, resource)
        return resource
    }

    /// Runs `read`, naming the record type in what its rows fail to decode into.
    static func decoding<T: FerryRecord, Value>(_ type: T.Type, _ read: () throws -> Value) throws -> Value {
        do {
            return try read()
        } catch let error as RowDecodingError {
            throw FerryKitError.recordMismatch(record: "\(T.self)", resource: T.resource, problem: "a row does not decode: \(error)")
        }
    }

    /// A record's values as the store keeps rows: JSON values by the column's type.
    static func values<T: FerryRecord>(_ record: T, _ resource: ServerSchema.Resource) throws -> RowData {
        var values: RowData = [:]
        for (name, value) in try record.databaseDictionary {
            values[name] = jsonValue(value, type: resource.column(name)?.valueType)
        }
        return values
    }
}
