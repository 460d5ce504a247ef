import Foundation

/// Text put into a request's path or query, every byte but RFC 3986's unreserved ones
/// (ASCII letters, digits, `-._~`) percent-encoded: one rule for a resource name, a row
/// id, a filter's column and value, a stream's id and a user name.
///
/// ASCII only, not `CharacterSet.alphanumerics`, whose letters include é and 中. An
/// upload's path was not encoded at all: for a table `"Odd Things"`, the Foundation
/// of iOS 16 (which FerryKit supports) refuses `URL(string:)` of it, so every upload
/// to it failed with `badURL`; later Foundations encode the space themselves.
enum PercentEncoding {
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
