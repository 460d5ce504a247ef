import Glibc

/// The IMF-fixdate for `Date`, formatted at most once per second.
///
/// Each I/O thread owns one, so no lock is needed.
struct HTTPDate {
    private(set) var bytes: [UInt8] = []
    private var second: Int = -1

    /// Reformats when the wall-clock second has changed.
    mutating func refresh() {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &ts)
        let now = Int(ts.tv_sec)
        guard now != second else { return }
        second = now
        bytes = Array(HTTPDateFormat.format(epochSeconds: now).utf8)
    }
}
