import FerryHTTP
import Testing

/// Server-sent events as their bytes (the WHATWG HTML standard's event stream format).
@Suite("Server-sent events")
struct ServerSentEventTests {
    @Test func fieldsThenABlankLine() {
        let event = ServerSentEvent(id: "c1", event: "changes", data: Array(#"{"a":1}"#.utf8))
        #expect(String(decoding: event.bytes, as: UTF8.self) == "id: c1\nevent: changes\ndata: {\"a\":1}\n\n")
        #expect(String(decoding: ServerSentEvent(data: []).bytes, as: UTF8.self) == "data: \n\n")
    }

    @Test func lineBreaksInDataBecomeDataLines() {
        let event = ServerSentEvent(data: Array("a\nb\r\nc\rd\n".utf8))
        #expect(String(decoding: event.bytes, as: UTF8.self) == "data: a\ndata: b\ndata: c\ndata: d\ndata: \n\n")
    }

    @Test func anIDOrNameCannotBreakTheStream() {
        let event = ServerSentEvent(id: "a\nevent: forged", event: "x\r\ny", data: Array("z".utf8))
        #expect(String(decoding: event.bytes, as: UTF8.self) == "id: aevent: forged\nevent: xy\ndata: z\n\n")
    }

    @Test func retryAndComments() {
        #expect(String(decoding: ServerSentEvent.retry(milliseconds: 1_000), as: UTF8.self) == "retry: 1000\n\n")
        #expect(ServerSentEvent.comment == Array(":\n\n".utf8))
    }
}
