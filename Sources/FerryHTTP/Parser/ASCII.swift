/// Byte constants and character classes of the HTTP/1.1 grammar (RFC 9110 §5.6, RFC 9112).
///
/// The parser works on raw bytes; these keep the grammar readable without
/// building Strings or Characters on the hot path.
enum ASCII {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let comma: UInt8 = 0x2C
    static let percent: UInt8 = 0x25
    static let plus: UInt8 = 0x2B
    static let question: UInt8 = 0x3F
    static let slash: UInt8 = 0x2F
    static let asterisk: UInt8 = 0x2A
    static let hash: UInt8 = 0x23
    static let equals: UInt8 = 0x3D
    static let ampersand: UInt8 = 0x26
    static let at: UInt8 = 0x40
    static let dot: UInt8 = 0x2E

    /// `tchar` of RFC 9110 §5.6.2, as a 256-entry table so a lookup costs one load.
    static let tcharTable: [Bool] = (0..<256).map { b in
        switch UInt8(b) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(UInt8(b))
        }
    }

    @inline(__always) static func isTchar(_ b: UInt8) -> Bool { tcharTable[Int(b)] }

    /// Space or horizontal tab: optional whitespace (OWS/BWS).
    @inline(__always) static func isWhitespace(_ b: UInt8) -> Bool { b == space || b == tab }

    /// `field-vchar / SP / HTAB` (VCHAR or obs-text); everything else, CR and NUL included, is refused.
    @inline(__always) static func isFieldValueByte(_ b: UInt8) -> Bool {
        b == tab || (b >= 0x20 && b != 0x7F)
    }

    /// Bytes a request-target may hold: visible ASCII except `#` (a fragment is never sent).
    @inline(__always) static func isTargetByte(_ b: UInt8) -> Bool {
        b > 0x20 && b < 0x7F && b != hash
    }

    @inline(__always) static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    /// The value of a hexadecimal digit, or nil.
    @inline(__always) static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: return b - 0x30
        case 0x41...0x46: return b - 0x41 + 10
        case 0x61...0x66: return b - 0x61 + 10
        default: return nil
        }
    }

    /// ASCII lower-casing of one byte.
    @inline(__always) static func lower(_ b: UInt8) -> UInt8 {
        b >= 0x41 && b <= 0x5A ? b | 0x20 : b
    }
}
