import Testing
import FerryTestSupport
@testable import Ferry

@Suite struct DatabaseURLRedactionTests {
    @Test(arguments: [
        ("postgresql://ferry_owner:s3cret@127.0.0.1:54329/ferry", "postgresql://ferry_owner:***@127.0.0.1:54329/ferry"),
        ("postgres://u:p%40ss@h/db?sslmode=require", "postgres://u:***@h/db?sslmode=require"),
        ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),
        ("postgresql://u@h/db?password=s3cret&sslmode=disable", "postgresql://u@h/db?password=***&sslmode=disable"),
        ("postgresql://h1,h2/db", "postgresql://h1,h2/db"),
        ("host=h user=u password=s3cret dbname=d", "host=h user=u password=*** dbname=d"),
        ("host=h password = 'se cr\\'et' dbname=d", "host=h password =*** dbname=d"),
        ("user=password host=h", "user=password host=h"),
    ])
    func redacts(url: String, expected: String) {
        let redacted = DatabaseURLRedaction.redacted(url)
        #expect(redacted == expected)
        #expect(!redacted.contains("s3cret"))
    }
}
