import FerryKit
import GRDB
import StudyModels

/// The open set's terms, in rank order, and the commands on them.
extension NotesApp {
    func terms() throws -> (set: FerryID<StudySet>, terms: [Term]) {
        guard let openSet else { throw Refusal("open a set first: open <n>") }
        return (openSet, try store.fetch(Term.self, where: Term.Columns.setID == openSet))
    }

    func term(_ number: Int) throws -> Term {
        let all = try terms().terms
        guard number >= 1, number <= all.count else {
            throw Refusal("there is no term \(number); the set has \(all.count)")
        }
        return all[number - 1]
    }

    func addTerm(_ word: String, _ definition: String) throws {
        // No rank: the store puts it after the last term as this device sees
        // it; another device adding at the same time may pick the same key,
        // and ties sort by id, the same everywhere.
        try store.insert(Term(setID: try terms().set, word: word, definition: definition))
        message = "added \(word)"
    }

    func editTerm(_ number: Int, _ word: String, _ definition: String) throws {
        try store.update(try term(number)) { term in
            term.word = word
            term.definition = definition
        }
        message = "edited \(number): \(word)"
    }

    func deleteTerm(_ number: Int) throws {
        let term = try term(number)
        try store.delete(term)
        message = "deleted \(term.word ?? "")"
    }

    /// Puts term `number` at position `position`: a new rank between its new
    /// neighbours, so only the moved term changes and moves from two devices
    /// merge instead of renumbering each other's terms.
    func moveTerm(_ number: Int, to position: Int) throws {
        let all = try terms().terms
        let moving = try term(number)
        let others = all.filter { $0.id != moving.id }
        guard position >= 1, position <= all.count else { throw Refusal("position \(position) is outside 1...\(all.count)") }
        try store.move(moving, after: position == 1 ? nil : others[position - 2])
        message = "moved \(moving.word ?? "") to \(position)"
    }
}
