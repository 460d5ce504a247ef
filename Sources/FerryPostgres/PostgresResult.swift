import CLibPQ

/// The outcome of one statement: its rows (text format) and command status.
public struct PostgresResult: Sendable {
    /// Column names, in order.
    public var columns: [String]
    /// The returned rows; empty for commands that return none.
    public var rows: [PostgresRow]
    /// Rows affected (`PQcmdTuples`): inserted, updated, deleted, selected; 0 when not applicable.
    public var affectedRows: Int
    /// The command tag, e.g. "INSERT 0 1", "UPDATE 3", "SELECT 2", "BEGIN".
    public var commandTag: String

    /// Creates a result by hand (mostly useful in tests of higher layers).
    public init(columns: [String], rows: [PostgresRow], affectedRows: Int, commandTag: String) {
        self.columns = columns
        self.rows = rows
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    /// The first row, if any.
    public var first: PostgresRow? { rows.first }
}

extension PostgresResult {
    /// Copies a successful `PGresult` into Swift values. The caller still owns and clears it.
    init(copying result: OpaquePointer) {
        let fieldCount = Int(PQnfields(result))
        let rowCount = Int(PQntuples(result))
        let names = (0..<fieldCount).map { String(cString: PQfname(result, Int32($0))) }
        let index = PostgresColumnIndex(names)
        var rows: [PostgresRow] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<Int32(rowCount) {
            var values: [String?] = []
            values.reserveCapacity(fieldCount)
            for field in 0..<Int32(fieldCount) {
                if PQgetisnull(result, row, field) != 0 {
                    values.append(nil)
                } else {
                    let length = Int(PQgetlength(result, row, field))
                    let bytes = UnsafeRawPointer(PQgetvalue(result, row, field)!)
                        .assumingMemoryBound(to: UInt8.self)
                    values.append(String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self))
                }
            }
            rows.append(PostgresRow(index: index, values: values))
        }
        self.init(
            columns: names, rows: rows,
            affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0,
            commandTag: String(cString: PQcmdStatus(result))
        )
    }
}
