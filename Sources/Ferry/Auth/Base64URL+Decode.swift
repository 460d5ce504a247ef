extension Base64URL {
    /// Decodes unpadded URL-safe base64; nil for any other character or an
    /// impossible length. Strict: the unused low bits of the last character must be
    /// zero, so every byte string has exactly one accepted spelling.
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        if input.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            guard let value = sextet(byte) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(accumulator >> UInt32(bits) & 0xff))
            }
        }
        if bits > 0, accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }

    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x41...0x5a: byte - 0x41
        case 0x61...0x7a: byte - 0x61 + 26
        case 0x30...0x39: byte - 0x30 + 52
        case 0x2d: 62
        case 0x5f: 63
        default: nil
        }
    }
}
