/// UUIDs as 16 raw bytes, the form snapshots store (a third of the text form).
enum UUIDBytes {
    /// Appends the 16 bytes of every UUID in `text`: UUIDs back to back as hex
    /// (`encode(bytes, 'hex')`), with or without their hyphens, 32 digits per UUID.
    /// False when the text is not that.
    static func appendConcatenated(_ text: String, to out: inout [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { utf8 -> Bool in
            out.reserveCapacity(out.count + utf8.count / 36 * 16)
            var high: UInt8 = 0
            var haveHigh = false
            for byte in utf8 {
                if byte == 0x2d { continue }
                guard let nibble = hexValue(byte) else { return false }
                if haveHigh {
                    out.append(high << 4 | nibble)
                } else {
                    high = nibble
                }
                haveHigh.toggle()
            }
            return !haveHigh && out.count % 16 == 0
        }
    }

    /// The UUIDs of `bytes` (a multiple of 16) as a PostgreSQL array literal
    /// `{8-4-4-4-12,...}`, ready to bind as `$n::uuid[]`.
    static func arrayLiteral(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = [0x7b]
        out.reserveCapacity(bytes.count / 16 * 37 + 2)
        var index = bytes.startIndex
        while index + 16 <= bytes.endIndex {
            if out.count > 1 { out.append(0x2c) }
            for offset in 0..<16 {
                if offset == 4 || offset == 6 || offset == 8 || offset == 10 { out.append(0x2d) }
                let byte = bytes[index + offset]
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
            index += 16
        }
        out.append(0x7d)
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }
}
