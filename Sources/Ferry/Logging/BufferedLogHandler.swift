import Dispatch
import FerryBase
import FerryHTTP
import Foundation
import Glibc
import Logging
import Synchronization

// The text log handler and the buffer it writes through, which a background
// thread flushes, so a request never waits on stderr.

/// A swift-log handler that formats lines into a `LogBuffer` instead of
/// writing each one, so that the access log does not dominate request cost.
///
/// ```swift
/// let buffer = LogBuffer()
/// LoggingSystem.bootstrap { BufferedLogHandler(label: $0, buffer: buffer) }
/// defer { buffer.close() }
/// ```
/// Lines look like `2025-01-31T12:00:00.123Z info ferry: message key=value`.
public struct BufferedLogHandler: FieldLogHandler {
    /// Handler-wide metadata, printed after the message.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    public var logLevel: Logger.Level
    private let label: String
    private let buffer: LogBuffer

    public init(label: String, buffer: LogBuffer, logLevel: Logger.Level = .info) {
        self.label = label
        self.buffer = buffer
        self.logLevel = logLevel
    }

    public func log(event: LogEvent) {
        LineScratch.with { line in
            appendHeader(event.level, event.message.description, to: &line)
            appendMetadata(metadata, to: &line)
            if let extra = event.metadata { appendMetadata(extra, to: &line) }
            line.flattenControlBytes()
            line.append(10)
            buffer.append(line.bytes)
        }
    }

    /// Writes the line `log(event:)` writes for `fields` as metadata, keys in the order given.
    public func log(level: Logger.Level, message: String, fields: [LogField]) {
        LineScratch.with { line in
            appendHeader(level, message, to: &line)
            appendMetadata(metadata, to: &line)
            // By index: a for-in loop copies each field (retaining its strings) first.
            for index in fields.indices {
                line.append(32)
                line.append(fields[index].key)
                line.append(61)
                fields[index].appendValueText(to: &line)
            }
            line.flattenControlBytes()
            line.append(10)
            buffer.append(line.bytes)
        }
    }

    /// The line up to its message: timestamp, level, label and message.
    private func appendHeader(_ level: Logger.Level, _ message: String, to line: inout LogLine) {
        Self.withTimestamp { line.append($0) }
        line.append(32)
        line.append(Self.name(of: level))
        line.append(32)
        line.append(label)
        line.append(": ")
        line.append(message)
    }

    /// `level.rawValue` without building a String for it.
    private static func name(of level: Logger.Level) -> StaticString {
        switch level {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    private func appendMetadata(_ metadata: Logger.Metadata, to line: inout LogLine) {
        guard !metadata.isEmpty else { return }
        // Keys are sorted so lines always read the same way; sorting the
        // dictionary's indices moves no values.
        let order = metadata.indices.sorted { metadata[$0].key < metadata[$1].key }
        for index in order {
            let (key, value) = metadata[index]
            line.append(32)
            line.append(key)
            line.append(61)
            switch value {
            case .string(let text): line.append(text)
            case .stringConvertible(let convertible): line.append(convertible.description)
            default: line.append(value.description)
            }
        }
    }

    /// Appends the wall-clock time as ISO 8601 UTC with milliseconds
    /// (`2026-01-31T12:00:00.123Z`), without allocating; Ferry's JSON handler uses it too.
    public static func appendTimestamp(to line: inout [UInt8]) {
        withTimestamp { $0.withMemoryRebound(to: UInt8.self) { line.append(contentsOf: $0) } }
    }

    private static func withTimestamp<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        return withTimestamp(seconds: Int(ts.tv_sec), milliseconds: Int(ts.tv_nsec / 1_000_000), body)
    }

    /// Calls `body` with `seconds` since 1970 (UTC) and `milliseconds` as ISO 8601,
    /// formatted on the stack.
    ///
    /// The date is computed here rather than by `gmtime_r`, which takes glibc's
    /// time-zone lock. The proleptic Gregorian calendar from a day count (March-based
    /// years, so the leap day falls last): valid for every year from 0 to 9999.
    static func withTimestamp<R>(seconds: Int, milliseconds: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let shifted = days + 719_468  // days from 0000-03-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &text) { out in
            var at = 0
            func put(_ byte: UInt8) {
                out[at] = byte
                at += 1
            }
            func two(_ value: Int) {
                put(UInt8(48 + value / 10))
                put(UInt8(48 + value % 10))
            }
            two(year / 100); two(year % 100); put(45)
            two(month); put(45)
            two(day); put(84)
            two(secondOfDay / 3_600); put(58)
            two(secondOfDay / 60 % 60); put(58)
            two(secondOfDay % 60); put(46)
            put(UInt8(48 + milliseconds / 100)); two(milliseconds % 100); put(90)
            return body(UnsafeRawBufferPointer(rebasing: out[0..<at]))
        }
    }
}

/// An in-memory byte buffer for log lines, written to a file descriptor by a
/// background timer every `flushInterval` or as soon as `flushBytes` gather,
/// so that logging a request costs a memcpy, not a write(2).
///
/// Call `flush()` (or `close()`) before the process exits.
public final class LogBuffer: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var flushScheduled = false
        var dropped = 0
    }

    private let fd: Int32
    private let flushBytes: Int
    private let maxBytes: Int
    private let state = Locked(State())
    /// Serializes writes so lines never interleave or reorder.
    private let writeLock = Locked(())
    /// Wakes the flusher thread early when `flushBytes` have gathered.
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)

    /// A buffer writing to `fd` (default stdout). When more than `maxBytes`
    /// are waiting (the reader is stuck), new lines are dropped and counted.
    public init(fd: Int32 = STDOUT_FILENO, flushInterval: Double = 0.1, flushBytes: Int = 64 * 1024, maxBytes: Int = 8 * 1024 * 1024) {
        self.fd = fd
        self.flushBytes = flushBytes
        self.maxBytes = maxBytes
        let flusher = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + flushInterval)
                writeOut()
            }
        }
        flusher.name = "ferry-log"
        flusher.start()
    }

    /// Appends one formatted line (with its newline): the text handler's lines and
    /// Ferry's JSON ones go through the same buffer.
    public func append(_ line: [UInt8]) {
        line.withUnsafeBytes { append($0) }
    }

    /// Appends one formatted line (with its newline) from bytes the caller keeps.
    public func append(_ line: UnsafeRawBufferPointer) {
        let wake = state.withLock { state -> Bool in
            guard state.bytes.count + line.count <= maxBytes else {
                state.dropped += 1
                return false
            }
            // As typed bytes: Array copies an UnsafeBufferPointer whole, a raw one byte by byte.
            line.withMemoryRebound(to: UInt8.self) { state.bytes.append(contentsOf: $0) }
            guard state.bytes.count >= flushBytes, !state.flushScheduled else { return false }
            state.flushScheduled = true
            return true
        }
        if wake { self.wake.signal() }
    }

    /// Writes everything buffered so far and returns once it is written.
    public func flush() {
        writeOut()
    }

    /// Flushes and stops the flusher thread; later lines wait for `flush()`.
    public func close() {
        stopped.store(true, ordering: .relaxed)
        wake.signal()
        flush()
    }

    private func writeOut() {
        writeLock.withLock { _ in writeOutLocked() }
    }

    private func writeOutLocked() {
        let (bytes, dropped) = state.withLock { state in
            let out = (state.bytes, state.dropped)
            state.bytes = []
            state.bytes.reserveCapacity(out.0.count)
            state.dropped = 0
            state.flushScheduled = false
            return out
        }
        var all = bytes
        if dropped > 0 { all.append(contentsOf: "log buffer full: dropped \(dropped) lines\n".utf8) }
        var offset = 0
        all.withUnsafeBytes { raw in
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n > 0 {
                    offset += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }
}
