import Glibc

/// Monotonic time in seconds, for timeouts and durations.
public enum MonotonicClock {
    /// Seconds on CLOCK_MONOTONIC (vDSO, no syscall).
    @inline(__always)
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1_000_000_000
    }
}
