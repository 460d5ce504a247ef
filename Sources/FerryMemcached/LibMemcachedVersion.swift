import CLibMemcached

/// The version string of the linked libmemcached (e.g. "1.1.4").
public var libmemcachedVersion: String { String(cString: memcached_lib_version()) }
