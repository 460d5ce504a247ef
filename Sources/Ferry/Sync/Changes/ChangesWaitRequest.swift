import FerryHTTP
import Foundation

/// The body of `POST /v1/changes/wait` (API.md, "One wait for several
/// streams"): `{"wait": S, "since": {"default": C, "<name>:<id>": C, ...}}`,
/// parsed and checked without touching the database. Anything else is 400
/// `invalid_json`, naming the cause.
struct ChangesWaitRequest: Sendable {
    /// One stream waited on: its key as the client gave it, the subscription
    /// it names (nil: the default stream), and the cursor the client holds.
    struct Stream: Sendable {
        let key: String
        let subscription: StreamSubscription?
        let since: ChangeCursor
    }

    /// Seconds to wait at most (before `live.max_wait_seconds`).
    let wait: Int
    /// The streams, the default one first, then by key.
    let streams: [Stream]

    /// The key of the default stream in `since`.
    static let defaultKey = "default"
    /// The largest `wait` taken, as `wait=` on GET (nine digits).
    static let maxWait = 999_999_999
    /// The largest body taken: a hundred streams with their cursors fit in a fraction of it.
    static let maxBytes = 64 * 1024

    init(_ request: HTTPRequest, maxStreams: Int) throws {
        try RequestBody.requireJSON(request)
        guard request.body.count <= Self.maxBytes else {
            throw Problem(413, .payloadTooLarge, "this body may have at most \(Self.maxBytes) bytes")
        }
        let body: Body
        do {
            body = try JSONDecoder().decode(Body.self, from: Data(request.body))
        } catch let problem as Problem {
            throw problem
        } catch {
            throw Self.invalid("the body is not valid JSON; send " + Self.shape)
        }
        guard body.since.count <= maxStreams else {
            throw Self.invalid("since names \(body.since.count) streams; at most \(maxStreams) (live.max_wait_streams) may be waited on at once")
        }
        var streams: [Stream] = []
        for (key, token) in body.since.sorted(by: { Self.precedes($0.key, $1.key) }) {
            let shown = key.prefix(64)
            var subscription: StreamSubscription?
            if key != Self.defaultKey {
                guard let parsed = StreamSubscription(key) else {
                    throw Self.invalid("since's key \(shown) is neither default nor <stream name>:<id>, the name lower-case letters, digits and _")
                }
                subscription = parsed
            }
            guard let cursor = ChangeCursor(token: token) else {
                throw Self.invalid("since's cursor for \(shown) is not a cursor this server gave out; fetch that stream without since first")
            }
            streams.append(Stream(key: key, subscription: subscription, since: cursor))
        }
        wait = body.wait
        self.streams = streams
    }

    /// `default` first, then the subscriptions by key: the order of the answer's `changed`.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a == defaultKey ? b != defaultKey : b == defaultKey ? false : a < b
    }

    static let shape = #"{"wait": seconds, "since": {"default": cursor, "<stream name>:<id>": cursor}}"#

    static func invalid(_ detail: String) -> Problem { Problem(400, .invalidJson, detail) }

    /// The JSON shape, decoded with the causes of a refusal named.
    private struct Body: Decodable {
        let wait: Int
        let since: [String: String]

        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container: KeyedDecodingContainer<Key>
            do {
                container = try decoder.container(keyedBy: Key.self)
            } catch {
                throw ChangesWaitRequest.invalid("the body must be a JSON object " + ChangesWaitRequest.shape)
            }
            if let unknown = container.allKeys.first(where: { $0.stringValue != "wait" && $0.stringValue != "since" }) {
                throw ChangesWaitRequest.invalid("the body has no member \(unknown.stringValue.prefix(64)); send " + ChangesWaitRequest.shape)
            }
            do {
                wait = try container.decode(Int.self, forKey: Key(stringValue: "wait"))
            } catch {
                throw ChangesWaitRequest.invalid("wait must be a whole number of seconds, 0 or more")
            }
            guard wait >= 0, wait <= ChangesWaitRequest.maxWait else {
                throw ChangesWaitRequest.invalid("wait must be a whole number of seconds, 0 or more")
            }
            do {
                since = try container.decode([String: String].self, forKey: Key(stringValue: "since"))
            } catch {
                throw ChangesWaitRequest.invalid("since must be an object mapping each stream (default, or <stream name>:<id>) to its cursor")
            }
        }
    }
}
