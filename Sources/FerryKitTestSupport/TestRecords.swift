import FerryKit
import GRDB

/// Records written by hand as an app would, over the example schema
/// (``ExampleSchema``), and some that do not fit it on purpose.
struct TestSet: FerryRecord, Hashable {
    static let resource = "study_sets"
    var id = FerryID<TestSet>()
    var creatorID: FerryID<FerryUser>?
    var title: String
    var description: String?
    var revision: Int64?

    enum CodingKeys: String, CodingKey { case id, creatorID = "creator_id", title, description, revision }

    static let terms = hasMany(TestTerm.self, using: ForeignKey(["set_id"]))
}

/// The root of the stream `set` (a set and its terms), as an app declares it
/// to subscribe by type: `engine.subscribe(TestSet.self, id:)`.
extension TestSet: FerryStreamRoot {
    static let stream = "set"
}

struct TestTerm: FerryRankedRecord, Hashable {
    static let resource = "terms"
    var id = FerryID<TestTerm>()
    var setID: FerryID<TestSet>
    var word: String?
    var definition: String?
    var rank: String?

    enum CodingKeys: String, CodingKey { case id, setID = "set_id", word, definition, rank }

    static let set = belongsTo(TestSet.self, using: ForeignKey(["set_id"]))
}

struct TestScore: FerryRecord, Hashable {
    static let resource = "scores"
    var id = FerryID<TestScore>()
    var player: String
    var points: Int
    var final: Bool?
    var tags: [String]?
    var extra: JSONValue?
}

/// `points` as text: the server has an integer.
struct ScoreWithTextPoints: FerryRecord {
    static let resource = "scores"
    var id = FerryID<ScoreWithTextPoints>()
    var player: String
    var points: String
}

/// A misspelt column.
struct SetWithTypo: FerryRecord {
    static let resource = "study_sets"
    var id = FerryID<SetWithTypo>()
    var titel: String?
}

/// A resource the server does not have.
struct Note: FerryRecord {
    static let resource = "notes"
    var id = FerryID<Note>()
    var body: String?
}

/// A set without its required title: every insert would be refused.
struct UntitledSet: FerryRecord {
    static let resource = "study_sets"
    var id = FerryID<UntitledSet>()
    var description: String?
}

/// Ranked, but sets have no ranks.
struct RankedSet: FerryRankedRecord {
    static let resource = "study_sets"
    var id = FerryID<RankedSet>()
    var title: String
}
