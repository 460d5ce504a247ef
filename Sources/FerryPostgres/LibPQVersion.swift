import CLibPQ

/// The version of the linked libpq, as `PQlibVersion()` reports it (e.g. 150018).
public var libpqVersion: Int { Int(PQlibVersion()) }
