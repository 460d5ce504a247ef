import FerryMemcached
import FerryPostgres

/// Version facts for `ferry version` and the metrics' build info.
public enum FerryVersion {
    /// Ferry's release.
    public static let current = "0.1.0"
    /// The linked libpq, as `major.minor` (libpq reports 150018 for 15.18).
    public static var libpq: String { "\(libpqVersion / 10_000).\(libpqVersion % 10_000)" }
    /// The linked libmemcached's version, as `memcached_lib_version()` reports it.
    public static var libmemcached: String { libmemcachedVersion }
}
