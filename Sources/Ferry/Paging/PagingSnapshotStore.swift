import FerryMemcached

#if canImport(Glibc)
import Glibc
#endif

/// Result snapshots in memcached: the complete ordered id list of an Index result,
/// stored under a random ``PagingToken`` for `ttlSeconds`.
///
/// A snapshot is a header item (``PagingSnapshotHeader``) plus chunk items of
/// ``PagingSnapshotLayout/idsPerChunk`` ids, 16 raw bytes each. Chunks are written
/// before the header, so a present header means a complete snapshot. Reading a page
/// fetches the header and only the chunk(s) covering that page in one multi-get.
public final class PagingSnapshotStore: Sendable {
    /// What reading a page found.
    enum Lookup: Sendable {
        /// The token's own expiry has passed (decided without asking memcached).
        case expired
        /// No header: never stored, evicted, or lost with a memcached server.
        case absent
        /// The header is there but a chunk the page needs is not (evicted, or its
        /// server was lost): the snapshot can no longer be served without gaps.
        case incomplete(PagingSnapshotHeader)
        /// The header, and the page's ids (16 bytes each) in snapshot order; empty
        /// when the page is past the end.
        case found(PagingSnapshotHeader, ids: ArraySlice<UInt8>)
        /// memcached could not answer.
        case unavailable(MemcachedError)
    }

    let memcached: MemcachedClient
    /// How long a snapshot is served.
    let ttlSeconds: Int
    /// Ids per chunk item.
    let idsPerChunk: Int
    /// The wall clock in seconds; injectable for tests.
    let now: @Sendable () -> Double
    /// Where memcached hits, misses and errors and created snapshots are counted.
    let metrics: FerryMetrics?

    /// Seconds memcached keeps items beyond the token's expiry, so that memcached's
    /// coarse clock can never drop a snapshot while its token is still valid (which
    /// would turn a 410 into a 404 or a page into an error).
    static let graceSeconds = 2

    /// A store over `memcached` whose snapshots live `ttlSeconds`; `metrics` counts its traffic.
    public init(
        memcached: MemcachedClient, ttlSeconds: Int, idsPerChunk: Int = PagingSnapshotLayout.idsPerChunk,
        now: @escaping @Sendable () -> Double = PagingSnapshotStore.wallClock, metrics: FerryMetrics? = nil
    ) {
        self.memcached = memcached
        self.ttlSeconds = ttlSeconds
        self.idsPerChunk = idsPerChunk
        self.now = now
        self.metrics = metrics
    }

    /// Unix time in seconds, from `CLOCK_REALTIME`.
    public static let wallClock: @Sendable () -> Double = {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Stores `ids` (16 bytes per id, in result order) and returns the token and header.
    /// Throws the memcached error when any item could not be stored.
    func store(
        ids: [UInt8], fingerprint: PagingFingerprint, userID: String, pageSize: Int
    ) throws(MemcachedError) -> (PagingToken, PagingSnapshotHeader) {
        guard userID.utf8.count == 36, ids.count % 16 == 0 else {
            throw MemcachedError(kind: .invalidArgument, message: "a snapshot needs a UUID user id and 16 bytes per id")
        }
        // Rounded up, so a token lives at least `ttlSeconds`.
        let expiresAt = UInt32((now() + Double(ttlSeconds)).rounded(.up))
        let token = PagingToken.issue(expiresAt: expiresAt, fingerprint: fingerprint)
        let header = PagingSnapshotHeader(
            fingerprint: fingerprint, userID: userID, total: ids.count / 16, idsPerChunk: idsPerChunk,
            pageSize: pageSize, expiresAt: expiresAt)
        let prefix = token.storageKey
        let itemTTL = min(ttlSeconds + Self.graceSeconds, 2_592_000)
        let chunkBytes = idsPerChunk * 16
        do {
            for index in 0..<header.chunkCount {
                let start = index * chunkBytes
                let chunk = Array(ids[start..<min(ids.count, start + chunkBytes)])
                try memcached.set(PagingSnapshotLayout.chunkKey(prefix, index), chunk, ttlSeconds: itemTTL)
            }
            try memcached.set(PagingSnapshotLayout.headerKey(prefix), header.bytes, ttlSeconds: itemTTL)
        } catch {
            metrics?.memcachedErrors.increment()
            throw error
        }
        metrics?.pagingSnapshotsCreated.increment()
        return (token, header)
    }

    /// The bytes memcached holds for a snapshot of `count` ids (values only, not
    /// memcached's per-item overhead of about 50 bytes plus the key).
    public func storedBytes(forCount count: Int) -> Int { PagingSnapshotHeader.byteCount + 16 * count }

    /// Reads page `page` (1-based) of `pageSize` ids.
    func read(token: PagingToken, page: Int, pageSize: Int) -> Lookup {
        if Double(token.expiresAt) <= now() { return .expired }
        let prefix = token.storageKey
        let headerKey = PagingSnapshotLayout.headerKey(prefix)
        // Guess the chunks from the request's page size, so that the usual case is
        // one multi-get for header and chunks together.
        let guess = (page - 1) * pageSize..<(page * pageSize)
        var keys = [headerKey]
        if let chunks = PagingSnapshotLayout.chunks(covering: guess, idsPerChunk: idsPerChunk) {
            keys += chunks.map { PagingSnapshotLayout.chunkKey(prefix, $0) }
        }
        do {
            var items = try memcached.getMany(keys)
            count(asked: keys.count, found: items.count)
            guard let headerBytes = items[headerKey] else {
                return Double(token.expiresAt) <= now() ? .expired : .absent
            }
            guard let header = PagingSnapshotHeader(bytes: headerBytes) else { return .absent }
            let positions = header.positions(ofPage: page)
            guard let chunks = PagingSnapshotLayout.chunks(covering: positions, idsPerChunk: header.idsPerChunk) else {
                return .found(header, ids: [])
            }
            let needed = chunks.map { PagingSnapshotLayout.chunkKey(prefix, $0) }
            let missing = needed.filter { items[$0] == nil }
            if !missing.isEmpty {
                // Another page size or chunk size than guessed: fetch what is needed.
                let more = try memcached.getMany(missing)
                count(asked: missing.count, found: more.count)
                for (key, value) in more { items[key] = value }
            }
            var ids: [UInt8] = []
            ids.reserveCapacity(positions.count * 16)
            for index in chunks {
                let firstPosition = index * header.idsPerChunk
                let expectedCount = min(header.idsPerChunk, header.total - firstPosition)
                guard let chunk = items[PagingSnapshotLayout.chunkKey(prefix, index)], chunk.count == expectedCount * 16
                else { return .incomplete(header) }
                let from = max(positions.lowerBound, firstPosition) - firstPosition
                let to = min(positions.upperBound, firstPosition + expectedCount) - firstPosition
                ids += chunk[(from * 16)..<(to * 16)]
            }
            return .found(header, ids: ids[...])
        } catch {
            metrics?.memcachedErrors.increment()
            return .unavailable(error)
        }
    }

    /// Hits and misses per key asked, as memcached itself counts them.
    private func count(asked: Int, found: Int) {
        metrics?.memcachedHits.increment(by: found)
        metrics?.memcachedMisses.increment(by: asked - found)
    }
}
