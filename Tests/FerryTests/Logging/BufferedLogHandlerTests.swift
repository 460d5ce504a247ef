import Ferry
import Glibc
import Logging
import Testing

@Suite("BufferedLogHandler")
struct BufferedLogHandlerTests {
    /// What `body` logs through a buffered handler labelled "t", read back from a pipe.
    private func logged(_ body: (inout Logger) -> Void) -> String {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let buffer = LogBuffer(fd: fds[1], flushInterval: 10)
        var logger = Logger(label: "t") { BufferedLogHandler(label: $0, buffer: buffer) }
        body(&logger)
        buffer.close()
        close(fds[1])
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &chunk, chunk.count)
            guard n > 0 else { break }
            all.append(contentsOf: chunk[0..<n])
        }
        return String(decoding: all, as: UTF8.self)
    }

    @Test func linesAreBufferedThenFlushedInOrder() {
        let text = logged { logger in
            logger[metadataKey: "request_id"] = "r1"
            logger.info("first")
            logger.debug("hidden")
            logger.warning("second", metadata: ["k": "v"])
        }
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix("info t: first request_id=r1") == true)
        #expect(lines.last?.hasSuffix("warning t: second request_id=r1 k=v") == true)
        #expect(lines.first?.count ?? 0 > 24)
    }

    /// A value may not send a terminal its escape sequences (clear the screen, hide
    /// text), in C0 (ESC) or C1 (CSI, U+009B) form; other characters pass whole.
    @Test func controlBytesInAMessageOrAValueBecomeSpaces() {
        let text = logged { logger in
            logger.warning("odd \u{1B}[2Jname", metadata: ["user": "eve\u{1B}]0;title\u{07}\u{0}\u{7F}é\u{9B}2Jż"])
        }
        #expect(text.hasSuffix("warning t: odd  [2Jname user=eve ]0;title   é  2Jż\n"), "\(text.debugDescription)")
    }

    /// One event is one line: libpq's messages span lines, and a value could forge a line.
    @Test func lineBreaksInAMessageOrAValueBecomeSpaces() {
        let text = logged { logger in
            logger.error(
                "could not connect",
                metadata: ["error": "server closed the connection unexpectedly\n\tThis probably means\r\n2026-01-01 critical t: forged"])
            logger.info("multi\nline")
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3, "\(text)")
        #expect(
            lines.first?.hasSuffix(
                "error t: could not connect error=server closed the connection unexpectedly \tThis probably means  2026-01-01 critical t: forged")
                == true, "\(text)")
        #expect(lines.dropFirst().first?.hasSuffix("info t: multi line") == true)
    }

    @Test func metadataValuesOfEveryKindInKeyOrder() {
        let text = logged { logger in
            logger.info(
                "request",
                metadata: [
                    "status": .stringConvertible(304), "route": .string("/v1/:resource/:id"),
                    "list": .array(["a", "b"]), "duration_ms": .stringConvertible(1.25),
                ])
        }
        #expect(text.hasSuffix("info t: request duration_ms=1.25 list=[\"a\", \"b\"] route=/v1/:resource/:id status=304\n"), "\(text)")
    }

    @Test func aLineLongerThanTheThreadsBufferIsWrittenWhole() {
        // The per-thread buffer starts at 1 KiB and grows; the second line reuses the grown one.
        let long = String(repeating: "x", count: 5_000)
        let text = logged { logger in
            logger.info("\(long)", metadata: ["k": "\(long)y"])
            logger.info("short")
        }
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix("info t: \(long) k=\(long)y") == true)
        #expect(lines.last?.hasSuffix("info t: short") == true)
    }
}
