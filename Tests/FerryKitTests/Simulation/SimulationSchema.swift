import FerryTestSupport

/// The tables a simulation writes, by the part each plays, so that the same seeded
/// runs hold FerryKit to two apps' schemas: the study app's hand-written SQL turned
/// sync rules, and the to-do app's written on the rules alone.
struct SimulationSchema: Sendable {
    /// The example whose migrations the server runs.
    var app: ExampleApp
    /// Rows owned by their creator and shared through `members`: study sets, lists.
    var shared: Table
    /// Rows ranked within a shared row: terms, todos.
    var child: Table
    /// Rows private to their owner: folders, notes.
    var own: Table
    /// Links from an own row to a shared row (folder_sets), if the app has them.
    var link: Link?
    /// Rows that share a shared row with a user: set collaborators, list members.
    var members: Members

    struct Table: Sendable {
        var name: String
        /// The owner column (shared, own) or the parent reference (child).
        var reference: String
        /// Text columns a device writes: the first on create, any of them on an edit.
        var fields: [String]
    }

    struct Link: Sendable {
        var name: String
        var own: String
        var shared: String
    }

    struct Members: Sendable {
        var name: String
        var scope: String
        var user: String
    }

    /// Every resource the checks compare, in the order they read them.
    var resources: [String] { [shared.name, child.name, own.name] + (link.map { [$0.name] } ?? []) + [members.name] }

    static let study = SimulationSchema(
        app: .study,
        shared: Table(name: "study_sets", reference: "creator_id", fields: ["title", "description"]),
        child: Table(name: "terms", reference: "set_id", fields: ["word", "definition"]),
        own: Table(name: "folders", reference: "owner_id", fields: ["name"]),
        link: Link(name: "folder_sets", own: "folder_id", shared: "set_id"),
        members: Members(name: "set_collaborators", scope: "set_id", user: "user_id"))

    static let todo = SimulationSchema(
        app: .todo,
        shared: Table(name: "lists", reference: "owner_id", fields: ["title"]),
        child: Table(name: "todos", reference: "list_id", fields: ["title"]),
        own: Table(name: "notes", reference: "owner_id", fields: ["body"]),
        link: nil,
        members: Members(name: "list_members", scope: "list_id", user: "user_id"))
}
