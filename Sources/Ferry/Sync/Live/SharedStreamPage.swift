import FerryPostgres

/// One stream check's answer as other users' waiters may take it
/// (``StreamChecks``): its page, the xid of each entry, and its guard
/// (``StreamGuard``), which says whose page it can be.
///
/// A waiter on the same cursor takes the page as it is. One on a later
/// frontier cursor takes the entries after its cursor, when the page was
/// complete (no more below the frontier): the entries it would have read
/// itself, from the same snapshot. Anything else checks for itself.
struct SharedStreamPage: Sendable {
    /// The xid of the cursor the check read from.
    let since: UInt64
    let page: ChangesPage
    /// Whether its waiters wait for the frontier, and below which (``FeedProbe/held(_:page:)``).
    let frontier: UInt64
    let held: Bool
    /// The page's entries, each with its xid, in order; nil when they could not be told apart.
    let entries: [(xid: UInt64, json: Substring)]?
    let guardAnswer: StreamGuard
    /// Who ran the check.
    let leader: String?
    /// When the check had its answer, after its snapshot: a taker's token
    /// must have been checked within the token cache's lifetime before it
    /// (``TokenVouchers``).
    var endedAt: ContinuousClock.Instant = .now

    /// Whether any other user may take it: the leader read the root, and
    /// nothing else that decides who reads it changed since the cursor.
    var offered: Bool {
        guardAnswer.readable && guardAnswer.unchanged && leader.map { !guardAnswer.users.contains($0) } == true
    }

    /// The page `request` (a frontier cursor at or after ``since``, of the
    /// same stream, resources and page size) gets for `user`, who read the
    /// root at a snapshot whose frontier was after the request's cursor
    /// (``StreamChecks``); nil when it must check for itself.
    func page(for request: ChangesRequest, user: String) -> ChangesPage? {
        guard offered, !guardAnswer.users.contains(user), request.since.position == nil, !request.since.isStart else { return nil }
        let after = request.since.afterXID
        if after == since { return page }
        guard after > since, !page.hasMore, let entries else { return nil }
        let kept = entries.filter { $0.xid > after }
        guard kept.count <= request.limit else { return nil }
        return ChangesPage(
            changes: kept.isEmpty ? nil : "[" + kept.map(\.json).joined(separator: ", ") + "]", hasMore: false,
            cursor: ChangesPage.frontierCursor(page.frontier, request: request), frontier: page.frontier)
    }

    /// Pairs the page's entries with the xids of ``ChangesPlan/statement(withXIDs:)``'s
    /// last column (`{x1,x2,...}`); nil when they do not pair up.
    static func entries(of page: ChangesPage, xids: String?) -> [(xid: UInt64, json: Substring)]? {
        guard let changes = page.changes else { return [] }
        guard let xids, xids.hasPrefix("{"), xids.hasSuffix("}") else { return nil }
        let numbers = xids.dropFirst().dropLast().split(separator: ",").map { UInt64($0) }
        guard let elements = arrayElements(changes), elements.count == numbers.count else { return nil }
        var entries: [(xid: UInt64, json: Substring)] = []
        for (number, element) in zip(numbers, elements) {
            guard let number else { return nil }
            entries.append((number, element))
        }
        return entries
    }

    /// The elements of a JSON array's text, as they are spelled; nil when it
    /// is not one array. PostgreSQL wrote it (`json_agg`), so only its
    /// structure is followed: strings, escapes, and nesting.
    static func arrayElements(_ text: String) -> [Substring]? {
        let bytes = text.utf8
        var elements: [Substring] = []
        var depth = 0
        var inString = false
        var escaped = false
        var start: String.Index?
        var index = bytes.startIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        while index < bytes.endIndex {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else {
                switch byte {
                case UInt8(ascii: "\""):
                    inString = true
                    if depth == 1, start == nil { start = index }
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    // Outside the array, only its opening.
                    if depth == 0, byte != UInt8(ascii: "[") { return nil }
                    depth += 1
                    if depth == 2, start == nil { start = index }
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    if depth == 1 {
                        // The array's end: nothing but spaces may follow.
                        guard byte == UInt8(ascii: "]") else { return nil }
                        if let begun = start { elements.append(Self.trimmed(text[begun..<index])) }
                        let rest = bytes[bytes.index(after: index)...]
                        return rest.allSatisfy(isSpace) ? elements : nil
                    }
                    depth -= 1
                    if depth < 1 { return nil }
                case UInt8(ascii: ","):
                    if depth == 1 {
                        guard let begun = start else { return nil }
                        elements.append(Self.trimmed(text[begun..<index]))
                        start = nil
                    }
                default:
                    if depth == 0 {
                        guard isSpace(byte) else { return nil }
                    } else if depth == 1, start == nil, !isSpace(byte) {
                        start = index
                    }
                }
            }
            index = bytes.index(after: index)
        }
        return nil
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let last = text.utf8.last, last == 0x20 || last == 0x0A || last == 0x0D || last == 0x09 {
            text = text[..<text.utf8.index(before: text.endIndex)]
        }
        return text
    }
}
