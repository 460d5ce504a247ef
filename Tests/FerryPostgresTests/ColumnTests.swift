import Testing
@testable import FerryPostgres

/// Rows read by column name: each name found once per result, every row read
/// at that position as a Swift type; NULL is nil, and an unknown column or a
/// value of another type is a decoding error that says which, never a trap.
@Suite struct ColumnTests {
    @Test func columnsAreFoundOnceAndReadFromEveryRow() throws {
        let connection = try ownerConnection()
        let result = try connection.query(
            """
            SELECT n, n % 2 = 0 AS even, CASE WHEN n = 2 THEN NULL ELSE n::text END AS label,
                   n::double precision / 2 AS half, (18446744073709551615 - n)::text AS big
              FROM generate_series(1, 3) n
            """)
        let n = try result.column("n", as: Int.self)
        let even = try result.column("even", as: Bool.self)
        let label = try result.column("label", as: String.self)
        let half = try result.column("half", as: Double.self)
        let big = try result.column("big", as: UInt64.self)
        #expect(try result.rows.map { try $0.decode(n) } == [1, 2, 3])
        #expect(try result.rows.map { try $0.decode(even) } == [false, true, false])
        #expect(try result.rows.map { try $0.decode(label) } == ["1", nil, "3"])
        #expect(try result.rows.map { try $0.decode(half) } == [0.5, 1, 1.5])
        #expect(try result.rows.first?.decode(big) == UInt64.max - 1)
    }

    @Test func anUnknownColumnIsAnErrorNamingTheColumnsThereAre() throws {
        let connection = try ownerConnection()
        // No rows: the columns are still known.
        let result = try connection.query("SELECT 1 AS one, 2 AS two WHERE false")
        let error = try #require(postgresError { try result.column("three", as: Int.self) })
        #expect(error.kind == .decoding)
        #expect(error.message == #"no column named "three" (the result has one, two)"#)
    }

    @Test func aValueOfAnotherTypeIsAnErrorNamingItsColumn() throws {
        let connection = try ownerConnection()
        let result = try connection.query("SELECT 'maybe' AS flag")
        let flag = try result.column("flag", as: Bool.self)
        let error = try #require(postgresError { try result.rows[0].decode(flag) })
        #expect(error.kind == .decoding)
        #expect(error.message == #"column flag: "maybe" is not a valid boolean"#)
        // Another result's column, past this row's end.
        let wide = try connection.query("SELECT 1 AS a, 2 AS b").column("b", as: Int.self)
        let narrow = try connection.query("SELECT 1 AS a").rows[0]
        #expect(postgresError { try narrow.decode(wide) }?.kind == .decoding)
    }
}
