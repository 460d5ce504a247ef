import FerryKit
import Foundation

/// One file of the protocol conformance suite (`clients/conformance/*.json`): cases
/// whose expected answers FerryKit itself computed. FerryWeb's tests read the same files
/// (clients/web/test/conformance.test.ts), so a change to one client's behaviour that
/// the other does not share fails one of the two.
///
/// A file is generated from FerryKit's pure functions and compared, line by line, with
/// the committed one; `FERRY_WRITE_CONFORMANCE=1 swift test --filter ConformanceTests`
/// writes it instead (then review the diff: it is a change of the protocol's behaviour).
/// One case per line, keys sorted, so a diff names the case that changed.
struct ConformanceFile {
    let name: String
    let about: String
    var sections: [(String, [JSONValue])] = []

    /// The suite's folder, found from this source file (tests run from any directory).
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("clients/conformance")

    var text: String {
        var out = "{\n\"about\": " + String(decoding: JSONValue.string(about).encoded(), as: UTF8.self)
        for (section, cases) in sections {
            out += ",\n\"\(section)\": [\n"
            out += cases.map { String(decoding: $0.encoded(), as: UTF8.self) }.joined(separator: ",\n")
            out += "\n]"
        }
        return out + "\n}\n"
    }

    /// Nil when the committed file matches; else the first line that differs, or how to
    /// write the file.
    func mismatch() throws -> String? {
        let url = Self.folder.appendingPathComponent(name)
        let generated = text
        if ProcessInfo.processInfo.environment["FERRY_WRITE_CONFORMANCE"] == "1" {
            try generated.write(to: url, atomically: true, encoding: .utf8)
            return nil
        }
        guard let committed = try? String(contentsOf: url, encoding: .utf8) else {
            return "\(name) is missing: run FERRY_WRITE_CONFORMANCE=1 swift test --filter ConformanceTests"
        }
        if committed == generated { return nil }
        let (a, b) = (
            committed.split(separator: "\n", omittingEmptySubsequences: false),
            generated.split(separator: "\n", omittingEmptySubsequences: false)
        )
        for i in 0..<max(a.count, b.count) where i >= a.count || i >= b.count || a[i] != b[i] {
            return
                "\(name) line \(i + 1) differs from what FerryKit does now:\n committed: \(i < a.count ? String(a[i]) : "(none)")\n FerryKit:  \(i < b.count ? String(b[i]) : "(none)")"
        }
        return nil
    }
}

/// Building JSON values tersely.
extension JSONValue {
    static func of(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
    static func of(_ number: Int64?) -> JSONValue { number.map(JSONValue.int) ?? .null }
    static func of(_ number: Int) -> JSONValue { .int(Int64(number)) }
    static func of(_ number: Double) -> JSONValue { .double(number) }
    static func of(_ flag: Bool) -> JSONValue { .bool(flag) }
    static func of(_ row: RowData?) -> JSONValue { row.map(JSONValue.object) ?? .null }
    static func of(_ texts: [String]) -> JSONValue { .array(texts.map(JSONValue.string)) }
}
