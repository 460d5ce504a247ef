import FerryKit

/// The open set's terms, in rank order, and the commands on them.
extension NotesApp {
    func terms() throws -> (set: String, terms: [RowData]) {
        guard let openSet else { throw Refusal("open a set first: open <n>") }
        return (openSet, try store.rows("terms", where: "set_id", equals: .string(openSet)))
    }

    func term(_ number: Int) throws -> RowData {
        let all = try terms().terms
        guard number >= 1, number <= all.count else {
            throw Refusal("there is no term \(number); the set has \(all.count)")
        }
        return all[number - 1]
    }

    func addTerm(_ word: String, _ definition: String) throws {
        let set = try terms().set
        // A rank after the last term as this device sees it; another device
        // adding at the same time may pick the same key, and ties sort by id,
        // the same everywhere.
        let rank = try store.rankAtEnd("terms", scope: .string(set))
        try store.create("terms", ["set_id": .string(set), "word": .string(word), "definition": .string(definition),
                                   "rank": .string(rank)])
        message = "added \(word)"
    }

    func editTerm(_ number: Int, _ word: String, _ definition: String) throws {
        let term = try term(number)
        try store.update("terms", id: try id(of: term), ["word": .string(word), "definition": .string(definition)])
        message = "edited \(number): \(word)"
    }

    func deleteTerm(_ number: Int) throws {
        let term = try term(number)
        try store.delete("terms", id: try id(of: term))
        message = "deleted \(term["word"]?.string ?? "")"
    }

    /// Puts term `number` at position `position`: a new rank between its new
    /// neighbours, so only the moved term changes and moves from two devices
    /// merge instead of renumbering each other's terms.
    func moveTerm(_ number: Int, to position: Int) throws {
        let all = try terms().terms
        let moving = try term(number)
        let others = all.filter { $0["id"] != moving["id"] }
        guard position >= 1, position <= all.count else { throw Refusal("position \(position) is outside 1...\(all.count)") }
        let after = position == 1 ? nil : others[position - 2]["id"]?.string
        try store.move("terms", id: try id(of: moving), after: after)
        message = "moved \(moving["word"]?.string ?? "") to \(position)"
    }
}
