import Crypto
import Foundation

/// One migration script on disk, named `NNNN_name.sql`.
public struct MigrationFile: Sendable, Equatable {
    /// The number before the first underscore; files apply in ascending order of it.
    public var version: Int
    /// The file's name, e.g. `0002_example_app.sql`; recorded in `ferry.schema_migrations`.
    public var fileName: String
    /// Where the file was read from.
    public var path: String
    /// Lower-case hex SHA-256 of the file's bytes, exactly as stored on disk.
    public var checksum: String
    /// The SQL sent to PostgreSQL: the file's text without a leading byte-order mark.
    public var script: String

    /// Creates a file from its name and bytes.
    ///
    /// - Throws: `MigrationError.badFileName` when `fileName` is not `NNNN_name.sql`, and
    ///   `MigrationError.unreadableFile` when the bytes are not UTF-8 or contain a NUL byte
    ///   (which libpq would silently cut the script at).
    public init(fileName: String, path: String, contents: Data) throws(MigrationError) {
        guard let version = Self.version(ofFileName: fileName) else {
            throw .badFileName(fileName: fileName, directory: (path as NSString).deletingLastPathComponent)
        }
        self.version = version
        self.fileName = fileName
        self.path = path
        self.checksum = Self.checksum(of: contents)
        self.script = try Self.script(of: contents, path: path)
    }

    /// The SQL of a script's bytes: UTF-8 without a leading byte-order mark.
    ///
    /// - Throws: `MigrationError.unreadableFile` when the bytes are not UTF-8 or contain a
    ///   NUL byte (which libpq would silently cut the script at).
    static func script(of contents: Data, path: String) throws(MigrationError) -> String {
        guard !contents.contains(0) else {
            throw .unreadableFile(path: path, reason: "it contains a NUL byte")
        }
        guard var text = String(validating: contents, as: UTF8.self) else {
            throw .unreadableFile(path: path, reason: "it is not valid UTF-8")
        }
        if text.unicodeScalars.first == "\u{FEFF}" { text.unicodeScalars.removeFirst() }
        return text
    }

    /// The version of a well-formed migration file name, or nil.
    ///
    /// The rule is: 1 to 9 ASCII digits (so the version fits PostgreSQL's `int`), an
    /// underscore, then one or more of `A-Z a-z 0-9 _ -`, then `.sql`.
    public static func version(ofFileName name: String) -> Int? {
        guard name.hasSuffix(".sql") else { return nil }
        let stem = name.utf8.dropLast(4)
        guard let underscore = stem.firstIndex(of: UInt8(ascii: "_")) else { return nil }
        let digits = stem[..<underscore]
        let label = stem[stem.index(after: underscore)...]
        guard (1...9).contains(digits.count), digits.allSatisfy(Self.isDigit),
            !label.isEmpty, label.allSatisfy(Self.isLabelByte)
        else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// Lower-case hex SHA-256 of `bytes`.
    public static func checksum(of bytes: Data) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in SHA256.hash(data: bytes) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}
