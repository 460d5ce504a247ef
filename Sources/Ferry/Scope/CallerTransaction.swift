import FerryPostgres

/// A caller's transaction held open across several round trips, for the
/// requests that cannot be one pipeline: a batch (each operation sees the
/// effects of the ones before it), an `Idempotency-Key` write (the stored
/// response must commit with the write it describes) and a server-computed
/// rank (FerryRank runs in Swift between reading the neighbours and writing).
///
/// It travels in the request's ``RequestScope``: while a ``Caller`` carries
/// one, `PostgresGateway.asCaller` runs its statements inside it instead of opening
/// a transaction of its own, so the actions run unchanged inside a batch.
///
/// Its statements run in Execution (`CallerTransaction+Run.swift`); the type is
/// shared because every step's scope carries it.
///
/// `@unchecked Sendable` because it wraps a non-Sendable connection: it is
/// created, used and dropped on the one thread that runs the request, inside
/// `PostgresGateway.callerTransaction`'s body; no other thread ever sees it.
final class CallerTransaction: @unchecked Sendable {
    let connection: PostgresConnection
    /// The bearer the transaction's first statement identified the caller with.
    let credential: Credential
    /// Set when a statement lost a serialization or deadlock race: the whole
    /// transaction is then rerun, whatever answer the request produced.
    private(set) var sawRetryableConflict = false
    /// Set when any statement failed: the transaction is aborted and can only roll back.
    private(set) var failed = false
    /// The live hints Ferry made of the rows its statements wrote (``RowHints``):
    /// published with the ones the transaction collected, after its commit.
    private(set) var rowHints: [ChangeHint] = []

    init(connection: PostgresConnection, credential: Credential) {
        self.connection = connection
        self.credential = credential
    }

    /// The hints Ferry made of the rows a statement returned (``RowHints/hints(in:)``).
    func recordRowHints(_ hints: [ChangeHint]) {
        rowHints += hints
    }

    /// Marks the transaction failed (it can only roll back now), and due to run
    /// again when the failure was a serialization or deadlock race.
    func recordFailure(retryable: Bool) {
        failed = true
        if retryable { sawRetryableConflict = true }
    }
}
