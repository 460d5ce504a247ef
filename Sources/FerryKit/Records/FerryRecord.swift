import Foundation
import GRDB

/// An app's struct for the rows of one resource: `Codable`, with the
/// resource's name, and a GRDB record, so the same type works with the
/// store (``FerryStore/insert(_:)``, ``FerryStore/fetch(_:where:)``,
/// ``FerryStore/observe(_:where:)``) and with GRDB's own query interface,
/// associations and observations on ``FerryStore/database``.
///
/// ```swift
/// struct Term: FerryRecord {
///     static let resource = "terms"
///     var id = FerryID<Term>()
///     var setID: FerryID<StudySet>
///     var word: String?
///     var rank: String?
///     enum CodingKeys: String, CodingKey { case id, setID = "set_id", word, rank }
/// }
/// ```
///
/// Properties are columns by their coding keys. `ferry generate swift` writes
/// one per resource from the server's schema. A type that does not fit its
/// resource (a property that is no column, a `String` for an integer column,
/// a resource the server does not have) is refused with
/// ``FerryKitError/recordMismatch(record:resource:problem:)`` when the store
/// first uses it.
public protocol FerryRecord: Codable, Sendable, Identifiable, FetchableRecord, PersistableRecord where ID: FerryRecordID {
    /// The server resource (table) whose rows this type holds.
    static var resource: String { get }
}

extension FerryRecord {
    /// GRDB's table: the local table of ``resource``.
    public static var databaseTableName: String { resource }
}

/// A record of a ranked resource (a `rank` column, ordered by FerryRank keys
/// within its scope): the only kind ``FerryStore/move(_:after:)`` takes.
public protocol FerryRankedRecord: FerryRecord {}

/// A record's id: its row id as text, which is how FerryKit stores and sends it.
public protocol FerryRecordID: Hashable, Sendable, Codable {
    /// The id as the row's `id` column holds it.
    var rowID: String { get }
}

extension String: FerryRecordID {
    public var rowID: String { self }
}

/// The id of a row of `Record`, typed so that a term's `setID` cannot hold a
/// folder's id. It is stored and sent as text (a lowercase UUID when FerryKit
/// makes it), so it reads and writes like a `String` in SQL and JSON.
public struct FerryID<Record>: FerryRecordID, RawRepresentable, CustomStringConvertible, ExpressibleByStringLiteral,
    DatabaseValueConvertible
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// A new id: a random UUID, lowercase, as FerryKit makes ids offline.
    public init() { rawValue = UUID().uuidString.lowercased() }

    public init(stringLiteral value: String) { rawValue = value }

    public var rowID: String { rawValue }
    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var databaseValue: DatabaseValue { rawValue.databaseValue }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> FerryID? {
        String.fromDatabaseValue(value).map(FerryID.init(rawValue:))
    }
}

/// The target of references to Ferry's own users (`creator_id`, `owner_id`):
/// `FerryID<FerryUser>` is a user's id, as `FerryAuth.signIn` returns it.
public enum FerryUser {}
