/// Hints an instance has not sent to the other instances yet (``HintOutbox``):
/// the text transactions collected (one a line, as their triggers wrote it)
/// and the hints Ferry made of the rows it wrote, kept as values. They become
/// lines only for a send (``written``), on the outbox's thread: a lone instance,
/// which sends nothing, never writes them out at all (issue 47 item 4: writing
/// them cost ~15,000 instructions a PATCH; bench/feed/README.md, "stop 21").
struct UnsentHints: Sendable {
    private(set) var collected = ""
    private(set) var made: [ChangeHint] = []

    /// Past this many bytes of collected text, or this many hints made (the outbox's thread
    /// is behind, or its connection down), they fold into one for everyone
    /// (``ChangeHint/everyone``), which says as much in bounded memory.
    static let foldLimit = 65_536
    static let madeFoldLimit = 1_024

    var isEmpty: Bool { collected.isEmpty && made.isEmpty }

    /// How many hints it holds (a line each, before a send leaves out the repeated ones).
    var count: Int { ChangeHint.lines(collected).count + made.count }

    /// About how many bytes it holds, for the log.
    var bytes: Int { collected.utf8.count + made.count * 64 }

    /// Adds a transaction's hints, folded past ``foldLimit`` or ``madeFoldLimit``.
    mutating func add(collected text: String, made hints: [ChangeHint]) {
        if !text.isEmpty { collected += text.hasSuffix("\n") ? text : text + "\n" }
        made += hints
        if collected.utf8.count > Self.foldLimit || made.count > Self.madeFoldLimit {
            collected = ""
            made = [.everyone]
        }
    }

    mutating func add(_ other: UnsentHints) { add(collected: other.collected, made: other.made) }

    /// The text a send carries: the collected lines as they are, then each made hint's
    /// line that is not among them yet, once. Hints repeat within a send when a
    /// transaction wrote several rows of one scope, and whenever triggers collected
    /// beside Ferry's own rows.
    var written: String {
        guard !made.isEmpty else { return collected }
        // A collected line this server cannot read stands for nothing but itself.
        var seen = Set(ChangeHint.lines(collected).compactMap { ChangeHint(payload: $0) })
        var text = collected
        text.reserveCapacity(collected.utf8.count + made.count * 64)
        for hint in made where seen.insert(hint).inserted {
            text += hint.line
            text += "\n"
        }
        return text
    }
}
