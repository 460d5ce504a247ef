import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

@Suite struct TransactionControlScannerTests {
    private func find(_ script: String) -> TransactionControlScanner.Finding? {
        TransactionControlScanner.firstFinding(in: script)
    }

    @Test(arguments: [
        ("BEGIN;\nCREATE TABLE t (id int);\nCOMMIT;\n", "BEGIN", 1),
        ("CREATE TABLE t (id int);\n\ncommit;\n", "COMMIT", 3),
        ("SELECT 1;\n  End ;", "END", 2),
        ("SELECT 1; ROLLBACK", "ROLLBACK", 1),
        ("SELECT 1;\nabort;", "ABORT", 2),
        ("-- note\nSTART TRANSACTION ISOLATION LEVEL SERIALIZABLE;", "START TRANSACTION", 2),
        ("/* a\n/* nested */ b */ BEGIN;", "BEGIN", 2),
        ("SELECT 'it''s;'; COMMIT;", "COMMIT", 1),
        ("SELECT E'\\';'; COMMIT;", "COMMIT", 1),
        ("CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END;\nCOMMIT;", "COMMIT", 2),
    ])
    func findsTransactionControl(script: String, statement: String, line: Int) {
        #expect(find(script) == .init(statement: statement, line: line))
    }

    @Test(arguments: [
        "CREATE TABLE t (id int);\nINSERT INTO t VALUES (1);\n",
        // PL/pgSQL blocks live inside dollar quotes.
        "CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$\nBEGIN\n  PERFORM 1;\nEND;\n$$;\n",
        "CREATE FUNCTION g() RETURNS void LANGUAGE plpgsql AS $body$ BEGIN RETURN; END; $body$;",
        "DO $$ BEGIN COMMIT; END $$;",
        "CREATE FUNCTION h() RETURNS int LANGUAGE sql\nBEGIN ATOMIC\n  SELECT CASE WHEN true THEN 1 END;\n  SELECT 2;\nEND;\n",
        "SAVEPOINT a; ROLLBACK TO SAVEPOINT a; RELEASE SAVEPOINT a;",
        "SELECT 'BEGIN; COMMIT;';",
        "SELECT \"commit\" FROM t; -- COMMIT;\n/* ROLLBACK; */",
        "CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO u VALUES (1); UPDATE u SET x = 1);",
        "SELECT $1::int; PREPARE p AS SELECT $1;",
        "",
    ])
    func ignoresEverythingElse(script: String) {
        #expect(find(script) == nil)
    }
}
