import FerryKit
import Foundation
import StudyModels

/// The list of study sets: what it shows, and the commands on it.
extension NotesApp {
    /// Every set this user may see, by title: the store orders by id (random
    /// UUIDs), and two people comparing screens need the same order.
    func sets() throws -> [StudySet] {
        try store.fetch(StudySet.self).sorted { ($0.title, $0.id.rawValue) < ($1.title, $1.id.rawValue) }
    }

    func set(_ number: Int) throws -> StudySet {
        let all = try sets()
        guard number >= 1, number <= all.count else { throw Refusal("there is no set \(number); sets lists \(all.count)") }
        return all[number - 1]
    }

    func open(_ number: Int) throws {
        let set = try set(number)
        openSet = set.id
        message = "opened \(set.title)"
    }

    func newSet(_ title: String) throws {
        // creator_id is the server's default (the signed-in user); the row
        // shows it once the create is synced.
        openSet = try store.insert(StudySet(title: title, description: "")).id
        message = "created set \(title)"
    }

    func rename(_ number: Int, _ title: String) throws {
        let set = try set(number)
        try store.update(set) { $0.title = title }
        message = "renamed \(set.title) to \(title)"
    }

    func deleteSet(_ number: Int) throws {
        let set = try set(number)
        // The server deletes the set's terms with it (they follow their
        // parent); the feed brings those tombstones down.
        try store.delete(set)
        message = "deleted set \(set.title)"
    }

    /// Makes another user a collaborator on the open set: only its creator may,
    /// and the server says so by rejecting anyone else's row. `user` is the
    /// other user's id, or their exact name, which the server looks up
    /// (`lookupUser(name:)`: online, and rationed).
    func share(with user: String) async throws {
        guard let openSet else { throw Refusal("open a set first, then share it") }
        let userID: String
        if UUID(uuidString: user) != nil {
            userID = user.lowercased()
        } else {
            do {
                guard let found = try await engine.lookupUser(name: user) else {
                    throw Refusal("no user called \(user) can be found (names match exactly, case included)")
                }
                userID = found.id
            } catch let error as UserLookupError {
                throw Refusal("\(error)")
            }
        }
        try store.insert(SetCollaborator(setID: openSet, userID: FerryID(rawValue: userID)))
        message = "shared with \(user) (sent on the next sync)"
    }
}

/// A command that cannot apply to what is on screen; its text is the answer.
struct Refusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
