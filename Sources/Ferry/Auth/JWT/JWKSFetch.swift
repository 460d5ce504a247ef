import CCurlFetch
import Foundation

/// Fetching a provider's JSON Web Key Set over HTTP(S) with libcurl's easy
/// interface (``CCurlFetch``): one GET, bounded in time and size, never cached
/// (``ProviderKeys`` decides how long keys live). Not Foundation's URLSession:
/// on Linux its libcurl multi loop spins a core for as long as a provider
/// accepts the connection and does not answer (bench/auth/README.md, "the hanging
/// fetch's spin"); the easy interface waits in poll().
enum JWKSFetch {
    /// The largest key set read. Providers publish a few keys, a few KiB.
    static let maxBytes = 1 << 20

    /// The body of a 200 answer to `GET url`, or why there is none.
    static func text(_ url: URL, timeout: Duration) -> Result<String, KeyImportError> {
        guard initialized else { return .failure(KeyImportError("fetching \(url.redacted) failed: libcurl did not initialize")) }
        // libcurl reads a timeout of 0 as none: at least 1 ms, at most a day.
        let milliseconds = Int(min(86_400_000, max(1, (timeout / .milliseconds(1)).rounded(.up))))
        var result = ccurlfetch_result()
        ccurlfetch_get(url.absoluteString, milliseconds, maxBytes, &result)
        defer { ccurlfetch_free(&result) }
        if result.status != 0 && result.status != 200 {
            return .failure(KeyImportError("\(url.redacted) answered \(result.status)"))
        }
        if result.too_large != 0 {
            return .failure(KeyImportError("\(url.redacted) sent no body, or one over \(maxBytes) bytes"))
        }
        if result.timed_out != 0 {
            return .failure(KeyImportError("fetching \(url.redacted) timed out"))
        }
        if result.code != 0 {
            let reason = result.message.map { String(cString: $0) } ?? "libcurl error \(result.code)"
            return .failure(KeyImportError("fetching \(url.redacted) failed: \(reason)"))
        }
        guard let body = result.body else { return .success("") }
        return .success(String(decoding: UnsafeRawBufferPointer(start: body, count: result.length), as: UTF8.self))
    }

    /// libcurl's global state, set up once (Swift runs a static's initializer once, thread-safely).
    private static let initialized = ccurlfetch_global_init() == 0
}
