/// An HTTP protocol version from a request line, such as `HTTP/1.1`.
public struct HTTPVersion: Sendable, Equatable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// A version from its two digits.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)

    /// `HTTP/<major>.<minor>`.
    public var description: String { "HTTP/\(major).\(minor)" }
}
