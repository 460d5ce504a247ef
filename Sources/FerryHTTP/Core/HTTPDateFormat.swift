import Glibc

/// HTTP-dates (RFC 9110 §5.6.7): the server's `Date`, and a handler's
/// `Last-Modified` and `If-Modified-Since`.
public enum HTTPDateFormat {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate of a millisecond timestamp (the second is rounded down).
    public static func format(milliseconds: Int64) -> String {
        format(epochSeconds: Int(milliseconds / 1000))
    }

    /// IMF-fixdate of seconds since the epoch: `Sun, 06 Nov 1994 08:49:37 GMT`.
    public static func format(epochSeconds: Int) -> String {
        var t = time_t(epochSeconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        // Every GET writes a Last-Modified: bytes into one buffer, no interpolation.
        return String(unsafeUninitializedCapacity: 29) { out in
            var at = 0
            func put(_ text: String) { for byte in text.utf8 { out[at] = byte; at += 1 } }
            func digits(_ value: Int32, _ count: Int) {
                var divisor: Int32 = 1
                for _ in 1..<count { divisor *= 10 }
                while divisor > 0 {
                    out[at] = UInt8(48 + (value / divisor) % 10)
                    at += 1
                    divisor /= 10
                }
            }
            put(days[Int(parts.tm_wday)]); put(", ")
            digits(parts.tm_mday, 2); put(" ")
            put(months[Int(parts.tm_mon)]); put(" ")
            digits(parts.tm_year + 1900, 4); put(" ")
            digits(parts.tm_hour, 2); put(":")
            digits(parts.tm_min, 2); put(":")
            digits(parts.tm_sec, 2); put(" GMT")
            return at
        }
    }

    /// Seconds since the epoch of an IMF-fixdate; nil for anything else (an
    /// invalid `If-Modified-Since` is ignored, RFC 9110 §13.1.3).
    public static func parse(_ value: String) -> Int64? {
        let parts = value.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", parts[0].hasSuffix(","),
              let day = Int32(parts[1]), let month = months.firstIndex(of: String(parts[2])), let year = Int32(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let h = Int32(time[0]), let m = Int32(time[1]), let s = Int32(time[2]),
              (1...31).contains(day), (0...23).contains(h), (0...59).contains(m), (0...60).contains(s)
        else { return nil }
        var parts2 = tm()
        parts2.tm_year = year - 1900
        parts2.tm_mon = Int32(month)
        parts2.tm_mday = day
        parts2.tm_hour = h
        parts2.tm_min = m
        parts2.tm_sec = s
        return Int64(timegm(&parts2))
    }
}
