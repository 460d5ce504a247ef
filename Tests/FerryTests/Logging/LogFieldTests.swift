import Ferry
import Glibc
import Logging
import Synchronization
import Testing

@Suite("LogField and FieldLogger")
struct LogFieldTests {
    private func text(_ value: LogField.Value) -> String {
        var line: [UInt8] = []
        LogField("k", value).appendValueText(to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    @Test func thousandthsReadAsDoubleDescriptionDoes() {
        // The request line's duration used to be Double(microseconds) / 1000 printed by
        // description; the fields path must print the very same text.
        var values = Array(0...20_000)
        values += [99_999, 100_000, 123_456, 1_000_001, 86_400_000, 123_456_789_012, -1, -10, -1_250, -12_000]
        for value in values {
            #expect(text(.thousandths(value)) == (Double(value) / 1000).description, "\(value)")
        }
    }

    @Test func integersAndStringsAreWrittenAsThemselves() {
        for value in [0, 7, 10, 304, -5, 1_234_567, Int.max, Int.min] {
            #expect(text(.int(value)) == value.description)
        }
        #expect(text(.string("/v1/:resource/:id")) == "/v1/:resource/:id")
        #expect(text(.string("ünïcode ✓")) == "ünïcode ✓")
        #expect(text(.string("")) == "")
    }

    /// Lines written through a buffered handler labelled "t", read back from a pipe.
    private func logged(_ body: (Logger) -> Void) -> [String] {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let buffer = LogBuffer(fd: fds[1], flushInterval: 10)
        var logger = Logger(label: "t") { BufferedLogHandler(label: $0, buffer: buffer) }
        logger[metadataKey: "instance"] = "a"
        body(logger)
        buffer.close()
        close(fds[1])
        var bytes = [UInt8](repeating: 0, count: 8192)
        let n = read(fds[0], &bytes, bytes.count)
        // Without the timestamp (24 characters and a space), which differs between lines.
        return String(decoding: bytes[0..<max(0, n)], as: UTF8.self).split(separator: "\n").map { String($0.dropFirst(25)) }
    }

    private static let fields = [
        LogField("bytes", .int(248)), LogField("duration_ms", .thousandths(7_366)),
        LogField("route", .string("/v1/:resource/:id")), LogField("status", .int(200)),
    ]

    @Test func aFieldLineReadsAsTheSameMetadataLine() {
        let lines = logged { logger in
            FieldLogger(logger).log(level: .info, "request", fields: Self.fields)
            var metadata = Logger.Metadata()
            for field in Self.fields { metadata[field.key] = field.metadataValue }
            logger.info("request", metadata: metadata)
            FieldLogger(logger).log(level: .debug, "below the level", fields: Self.fields)
        }
        #expect(lines.count == 2)
        #expect(lines.first == "info t: request instance=a bytes=248 duration_ms=7.366 route=/v1/:resource/:id status=200")
        #expect(lines.first == lines.last)
    }

    @Test func anyOtherHandlerGetsTheFieldsAsMetadata() throws {
        let events = RecordingLogHandler.Events()
        let logger = Logger(label: "t") { _ in RecordingLogHandler(events: events) }
        FieldLogger(logger).log(level: .info, "request", fields: Self.fields)
        FieldLogger(logger).log(level: .debug, "below the level", fields: Self.fields)
        let recorded = events.events.withLock { $0 }
        #expect(recorded.count == 1)
        let (message, metadata) = try #require(recorded.first)
        #expect(message == "request")
        #expect(metadata.count == 4)
        #expect(metadata["route"] == .string("/v1/:resource/:id"))
        #expect(metadata["status"]?.description == "200")
        #expect(metadata["duration_ms"]?.description == "7.366")
    }
}
