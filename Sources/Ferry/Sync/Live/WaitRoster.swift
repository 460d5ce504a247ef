import Dispatch
import FerryBase
import FerryPostgres
import Foundation

/// Every instance's open waits of one user, for the console's "Waiting now"
/// (docs/CONSOLE.md). An instance knows only its own waiters
/// (``WaiterRegistry``), and behind a balancer a user's devices wait on any
/// instance, so the console's instance asks them all, on the LISTEN channel
/// they already hold (`ferry_waits`):
/// - the ask, `{"ask":"<id>","user":"<user id>"}`, goes out by `pg_notify` in
///   the statement that counts the other listeners connected now (their
///   `application_name` is `ferry-listen`, ``ChangeListener``);
/// - each listener answers on the same channel with its waits of that user
///   (``answer(to:instance:registry:)``), as many as fit PostgreSQL's
///   8,000-byte payload, the rest counted in `more`;
/// - the asker takes its own waits from its registry, and waits for the
///   others' answers until all the counted listeners answered or 2 s passed.
///   A listener that did not answer by then is counted as such, not guessed
///   at. An instance whose listener is down is not counted: it hears no ask.
///
/// The payloads name a user and the streams their devices follow. Any role
/// that may connect to the database can LISTEN, so they are as visible as the
/// live hints on `ferry_changes`, which name users and scope rows too; they
/// carry no token and no row.
final class WaitRoster: Sendable {
    static let channel = "ferry_waits"
    /// How long the asker waits for the other instances.
    static let patience = 2.0
    /// PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more.
    static let payloadLimit = 7_900

    struct Ask: Codable, Sendable {
        let ask: String
        let user: String
        /// The asking instance, which answers for itself.
        let from: String
    }

    /// One instance's answer: its waits of the user, the oldest first.
    struct Answer: Codable, Sendable {
        let answer: String
        let instance: String
        let host: String
        let pid: Int32
        var waits: [WaiterRegistry.Wait]
        /// Waits left out to keep the payload under PostgreSQL's limit.
        var more: Int
    }

    /// What the instances said: this one's answer first.
    struct Census: Sendable {
        let answers: [Answer]
        /// Other instances counted as listening that did not answer in time.
        let unanswered: Int
    }

    private final class Gathering: Sendable {
        let answers = Locked<[Answer]>([])
        let arrived = DispatchSemaphore(value: 0)
    }

    private let gatherings = Locked<[String: Gathering]>([:])
    let instance: String

    init(instance: String) {
        self.instance = instance
    }

    /// The user's waits on every instance that answers: `local` is this
    /// instance's, and `send` runs the asking statement (a pool connection's).
    func census(
        of user: String, local: [WaiterRegistry.Wait], listening: Bool, patience: Double = WaitRoster.patience,
        send: (PlannedStatement) throws -> Int
    ) throws -> Census {
        let id = UUID().uuidString.lowercased()
        let gathering = Gathering()
        gatherings.withLock { $0[id] = gathering }
        defer { _ = gatherings.withLock { $0.removeValue(forKey: id) } }
        let payload = String(decoding: try JSONEncoder().encode(Ask(ask: id, user: user, from: instance)), as: UTF8.self)
        // This instance's own listener hears the ask too, and its answer is skipped (``received``).
        let others = max(0, try send(Self.askStatement(payload)) - (listening ? 1 : 0))
        let deadline = DispatchTime.now() + patience
        while gathering.answers.withLock({ $0.count }) < others {
            if gathering.arrived.wait(timeout: deadline) == .timedOut { break }
        }
        let mine = Self.fitted(
            Answer(answer: id, instance: instance, host: Self.host, pid: getpid(), waits: local, more: 0))
        let theirs = gathering.answers.withLock { $0 }.sorted { ($0.host, $0.pid) < ($1.host, $1.pid) }
        return Census(answers: [mine] + theirs, unanswered: max(0, others - theirs.count))
    }

    /// The ask, and how many listeners of this database are connected now, in one statement.
    static func askStatement(_ payload: String) -> PlannedStatement {
        let query: SQLQuery = """
            SELECT pg_catalog.pg_notify(\(bind: channel), \(bind: payload)) IS NULL AS sent,
                   (SELECT count(*) FROM pg_catalog.pg_stat_activity
                     WHERE datname = pg_catalog.current_database() AND application_name = 'ferry-listen') AS listening
            """
        return query.statement
    }

    /// An answer heard on the channel: handed to the ask it answers, if it is
    /// still gathering here and came from another instance.
    func received(_ answer: Answer) {
        guard answer.instance != instance, let gathering = gatherings.withLock({ $0[answer.answer] }) else { return }
        gathering.answers.withLock { $0.append(answer) }
        gathering.arrived.signal()
    }

    /// A payload heard on the channel, read as an ask or an answer; nil for
    /// anything else (another program's payload on the channel is ignored).
    enum Message: Sendable {
        case ask(Ask)
        case answer(Answer)
    }

    static func message(_ payload: String) -> Message? {
        let data = Data(payload.utf8)
        if let answer = try? JSONDecoder().decode(Answer.self, from: data) { return .answer(answer) }
        if let ask = try? JSONDecoder().decode(Ask.self, from: data) { return .ask(ask) }
        return nil
    }

    /// This instance's answer to `ask`, as the payload to send; nil when it is
    /// this instance's own ask (it takes its waits from its registry).
    static func answer(to ask: Ask, instance: String, registry: WaiterRegistry) -> String? {
        guard ask.from != instance else { return nil }
        let answer = fitted(
            Answer(answer: ask.ask, instance: instance, host: host, pid: getpid(), waits: registry.waits(of: ask.user), more: 0))
        return encoded(answer)
    }

    /// `answer` with as many of its waits as fit the payload limit, the rest counted in `more`.
    static func fitted(_ answer: Answer) -> Answer {
        var answer = answer
        while let text = encoded(answer), text.utf8.count > payloadLimit, !answer.waits.isEmpty {
            let drop = max(1, answer.waits.count / 2)
            answer.waits.removeLast(drop)
            answer.more += drop
        }
        return answer
    }

    private static func encoded(_ answer: Answer) -> String? {
        (try? JSONEncoder().encode(answer)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The machine's name, as operators know it (`ferry serve` on several hosts).
    static let host = ProcessInfo.processInfo.hostName
}
