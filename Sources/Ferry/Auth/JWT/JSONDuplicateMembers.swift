import Foundation

/// Finds a member name that appears twice in one JSON object of a JWT's
/// header or payload. RFC 7515 §4 and RFC 7519 §4 let a reader refuse such a
/// token or take the last member; Foundation's decoder keeps one of them, and
/// a parser in front of Ferry (a gateway, a log pipeline) may keep the other,
/// so that two readers of the same token see two identities. Ferry refuses.
///
/// Runs on text the JSON decoder already accepted, so it only has to find
/// member names: strings in key position of an object, at any depth. Names
/// are compared as Swift strings, as the decoder's dictionary compares them
/// (canonically equivalent names count as the same).
enum JSONDuplicateMembers {
    private enum Container {
        case object(Set<String>)
        case array
    }

    /// The first name found twice in one object of `bytes`, or nil.
    static func first(in bytes: [UInt8]) -> String? {
        var stack: [Container] = []
        var expectingName = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                var end = index + 1
                var escaped = false
                var hasEscape = false
                while end < bytes.count {
                    let next = bytes[end]
                    if escaped {
                        escaped = false
                    } else if next == UInt8(ascii: "\\") {
                        escaped = true; hasEscape = true
                    } else if next == UInt8(ascii: "\"") {
                        break
                    }
                    end += 1
                }
                if expectingName, case .object(var names)? = stack.last {
                    let name =
                        hasEscape
                        ? unescaped(bytes[index...min(end, bytes.count - 1)])
                        : String(decoding: bytes[(index + 1)..<min(end, bytes.count)], as: UTF8.self)
                    if !names.insert(name).inserted { return name }
                    stack[stack.count - 1] = .object(names)
                    expectingName = false
                }
                index = end + 1
                continue
            case UInt8(ascii: "{"):
                stack.append(.object([]))
                expectingName = true
            case UInt8(ascii: "["):
                stack.append(.array)
                expectingName = false
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = stack.popLast()
                expectingName = false
            case UInt8(ascii: ","):
                if case .object? = stack.last { expectingName = true }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// A string literal with escapes (`"a\u0062"`), decoded as the JSON decoder does.
    private static func unescaped(_ literal: ArraySlice<UInt8>) -> String {
        (try? JSONDecoder().decode(String.self, from: Data(literal))) ?? String(decoding: literal, as: UTF8.self)
    }
}
