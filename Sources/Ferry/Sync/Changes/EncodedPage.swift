import FerryHTTP

/// A page's answer as bytes, made once for every waiter that takes the same
/// page (``SharedStreamPage``): its compact JSON body, as a long poll answers
/// it, and its server-sent event, as an event stream sends it. A teacher's
/// commit to a set a class follows is one page for a thousand students; made
/// per answer, its JSON, compaction and event framing were a thousand times
/// the same work (bench/live/README.md, "stop 16").
///
/// Only a page that is the same for every waiter carries one: the event's
/// `id` is the page's cursor, which a waiter from another cursor would not
/// get (``SharedStreamPage/page(for:user:)`` cuts a page of its own for it).
final class EncodedPage: Sendable {
    /// `{"changes": [...], "cursor": "...", "has_more": bool}`, compact.
    let body: [UInt8]
    /// `id: <cursor>`, `event: changes`, `data: <body>`, and the blank line.
    let event: [UInt8]
    /// The page's cursor, as a stream's registry entry keeps it.
    let cursorToken: String

    init(_ page: ChangesPage) {
        let body = page.body
        self.body = CompactJSON.compacted(body) ?? body
        cursorToken = page.cursor.token
        event = ServerSentEvent(id: cursorToken, event: "changes", data: self.body).bytes
    }
}

extension ChangesPage {
    /// The same page with its answer encoded once, for the waiters that take it as it is.
    func encodedOnce() -> ChangesPage {
        var page = self
        page.encoded = EncodedPage(self)
        return page
    }

    /// ``cursor``'s token, made once when encoded.
    var cursorToken: String { encoded?.cursorToken ?? cursor.token }

    /// The body a long poll answers: the shared bytes when encoded, else made now
    /// (``CompactJSONResponder`` compacts it on the way out).
    var answerBody: [UInt8] { encoded?.body ?? body }

    /// The event a stream sends: the shared bytes when encoded, else made now, compact,
    /// exactly the page a poll answers.
    var event: [UInt8] {
        if let encoded { return encoded.event }
        let body = self.body
        return ServerSentEvent(id: cursor.token, event: "changes", data: CompactJSON.compacted(body) ?? body).bytes
    }
}
