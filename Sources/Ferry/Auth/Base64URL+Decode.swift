extension Base64URL {
    /// Decodes unpadded URL-safe base64; nil for any other alphabet, a
    /// length that cannot occur, or non-zero leftover bits (so every byte
    /// string has exactly one accepted spelling).
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 != 1 else { return nil }
        var values: [UInt32] = []
        values.reserveCapacity(input.count)
        for byte in input {
            guard let value = sextet(byte) else { return nil }
            values.append(value)
        }
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var i = 0
        while i + 3 < values.count {
            let n = values[i] << 18 | values[i + 1] << 12 | values[i + 2] << 6 | values[i + 3]
            out += [UInt8(n >> 16 & 255), UInt8(n >> 8 & 255), UInt8(n & 255)]
            i += 4
        }
        switch values.count - i {
        case 2:
            guard values[i + 1] & 0x0f == 0 else { return nil }
            out.append(UInt8((values[i] << 2 | values[i + 1] >> 4) & 255))
        case 3:
            guard values[i + 2] & 0x03 == 0 else { return nil }
            let n = values[i] << 18 | values[i + 1] << 12 | values[i + 2] << 6
            out += [UInt8(n >> 16 & 255), UInt8(n >> 8 & 255)]
        default: break
        }
        return out
    }

    private static func sextet(_ byte: UInt8) -> UInt32? {
        switch byte {
        case 0x41...0x5a: UInt32(byte - 0x41)
        case 0x61...0x7a: UInt32(byte - 0x61 + 26)
        case 0x30...0x39: UInt32(byte - 0x30 + 52)
        case 0x2d: 62
        case 0x5f: 63
        default: nil
        }
    }
}
