import FerryBase
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fetching a provider's JSON Web Key Set over HTTP(S) with Foundation's
/// URLSession: one GET, bounded in time and size, never cached by Foundation
/// (``ProviderKeys`` decides how long keys live).
enum JWKSFetch {
    /// The largest key set read. Providers publish a few keys, a few KiB.
    static let maxBytes = 1 << 20

    /// The body of a 200 answer to `GET url`, or why there is none.
    static func text(_ url: URL, timeout: Duration) -> Result<String, KeyImportError> {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: seconds)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let outcome = Locked<Result<String, KeyImportError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: request) { data, response, error in
            let result: Result<String, KeyImportError>
            if let error {
                result = .failure(KeyImportError("fetching \(url.absoluteString) failed: \(error.localizedDescription)"))
            } else if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
                result = .failure(KeyImportError("\(url.absoluteString) answered \(status)"))
            } else if let data, data.count <= maxBytes {
                result = .success(String(decoding: data, as: UTF8.self))
            } else {
                result = .failure(KeyImportError("\(url.absoluteString) sent no body, or one over \(maxBytes) bytes"))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + seconds + 1) == .timedOut {
            task.cancel()
            return .failure(KeyImportError("fetching \(url.absoluteString) timed out"))
        }
        return outcome.withLock { $0! }
    }

    /// One session for every fetch: no cache, no cookies.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = nil
        return URLSession(configuration: configuration)
    }()
}
