/// What FerryKit refuses or cannot do, as opposed to what the server refused
/// (those are ``SyncEvent``s). A refused write leaves the store and its
/// outbox as they were. Each case's ``description`` names the resource,
/// column or record at fault.
public enum FerryKitError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The store has no such resource (the schema was not applied, or the server has none).
    case unknownResource(String)
    case noSuchRow(resource: String, id: String)
    /// A create with the id of a row the store already has.
    case rowExists(resource: String, id: String)
    /// A write named a column the resource does not have.
    case unknownColumn(resource: String, column: String, known: [String])
    /// A value does not fit the column's type on the server (`expected`, a
    /// PostgreSQL type name; `got`, what was written).
    case typeMismatch(resource: String, column: String, expected: String, got: String)
    /// A create left out a column the server requires (not null, no default),
    /// or a write set such a column to null.
    case missingValue(resource: String, column: String)
    /// A write changed a column the app may not change: one the server owns
    /// (`revision`, `last_modified`, a column it fills), or one set once at
    /// creation (`terms.set_id`).
    case readOnlyColumn(resource: String, column: String)
    /// A move of a row of a resource without ranks.
    case notRanked(String)
    /// A ``FerryRecord`` type does not fit its resource: `problem` says how.
    case recordMismatch(record: String, resource: String, problem: String)
    /// The server's answer could not be read.
    case malformedAnswer(String)
    /// Signing in failed, with the server's status.
    case signInFailed(status: Int)
    /// Sync is paused: the server refused the token twice in a row.
    case unauthorized

    public var description: String {
        switch self {
        case .unknownResource(let name):
            return "the server has no resource \"\(name)\" (or the store has not synced its schema yet)"
        case .noSuchRow(let resource, let id):
            return "\(resource) has no row \(id)"
        case .rowExists(let resource, let id):
            return "\(resource) already has a row \(id)"
        case .unknownColumn(let resource, let column, let known):
            return "\(resource) has no column \"\(column)\"; its columns are \(known.joined(separator: ", "))"
        case .typeMismatch(let resource, let column, let expected, let got):
            return "\(resource).\(column) is \(expected) on the server; \(got) does not fit it"
        case .missingValue(let resource, let column):
            return "\(resource).\(column) is required: the server has no default for it and it cannot be null"
        case .readOnlyColumn(let resource, let column):
            return "\(resource).\(column) is read-only: the server sets it, or it is set once when the row is created"
        case .notRanked(let resource):
            return "\(resource) has no rank column: its rows have no order to move in"
        case .recordMismatch(let record, let resource, let problem):
            return "\(record) does not fit the resource \"\(resource)\": \(problem)"
        case .malformedAnswer(let what):
            return "the server's answer could not be read: \(what)"
        case .signInFailed(let status):
            return "signing in failed with status \(status)"
        case .unauthorized:
            return "the server refused the token twice in a row; sync is paused until the app signs in again"
        }
    }
}
