import FerryKit
import Foundation

/// The list of study sets: what it shows, and the commands on it.
extension NotesApp {
    /// Every set this user may see, by title: the store orders by id (random
    /// UUIDs), and two people comparing screens need the same order.
    func sets() throws -> [RowData] {
        try store.rows("study_sets").sorted {
            let left = $0["title"]?.string ?? "", right = $1["title"]?.string ?? ""
            return left != right ? left < right : ($0["id"]?.string ?? "") < ($1["id"]?.string ?? "")
        }
    }

    func set(_ number: Int) throws -> RowData {
        let all = try sets()
        guard number >= 1, number <= all.count else { throw Refusal("there is no set \(number); sets lists \(all.count)") }
        return all[number - 1]
    }

    func open(_ number: Int) throws {
        let set = try set(number)
        openSet = set["id"]?.string
        message = "opened \(set["title"]?.string ?? "")"
    }

    func newSet(_ title: String) throws {
        // creator_id is the server's default (the signed-in user); the row
        // shows it once the create is synced.
        openSet = try store.create("study_sets", ["title": .string(title), "description": .string("")])
        message = "created set \(title)"
    }

    func rename(_ number: Int, _ title: String) throws {
        let set = try set(number)
        try store.update("study_sets", id: try id(of: set), ["title": .string(title)])
        message = "renamed \(set["title"]?.string ?? "") to \(title)"
    }

    func deleteSet(_ number: Int) throws {
        let set = try set(number)
        // The server deletes the set's terms with it (they follow their
        // parent); the feed brings those tombstones down.
        try store.delete("study_sets", id: try id(of: set))
        message = "deleted set \(set["title"]?.string ?? "")"
    }

    /// Makes another user a collaborator on the open set: only its creator may,
    /// and the server says so by rejecting anyone else's row.
    func share(with userID: String) throws {
        guard let openSet else { throw Refusal("open a set first, then share it") }
        guard UUID(uuidString: userID) != nil else { throw Refusal("\(userID) is not a user id (a UUID, as the other screen shows)") }
        try store.create("set_collaborators", ["set_id": .string(openSet), "user_id": .string(userID)])
        message = "shared with \(userID) (sent on the next sync)"
    }

    func id(of row: RowData) throws -> String {
        guard let id = row["id"]?.string else { throw Refusal("a row without an id") }
        return id
    }
}

/// A command that cannot apply to what is on screen; its text is the answer.
struct Refusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
