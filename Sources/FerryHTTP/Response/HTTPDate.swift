import Glibc

/// The IMF-fixdate for `Date`, formatted at most once per second.
///
/// Each I/O thread owns one, so no lock is needed.
struct HTTPDate {
    private(set) var bytes: [UInt8] = []
    private var second: Int = -1

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Reformats when the wall-clock second has changed.
    mutating func refresh() {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        let now = Int(ts.tv_sec)
        guard now != second else { return }
        second = now
        bytes = Array(Self.format(epochSeconds: now).utf8)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func format(epochSeconds: Int) -> String {
        var t = time_t(epochSeconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
