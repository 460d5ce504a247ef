import Testing
import FerryTestSupport
@testable import Ferry
@testable import FerryMigrations

@Suite struct ScriptLocationTests {
    @Test func firstCharacter() {
        #expect(ScriptLocation(position: 1, in: "SELEC 1;") == ScriptLocation(line: 1, column: 1, lineText: "SELEC 1;"))
    }

    @Test func laterLine() {
        let script = "-- one\nSELECT 1;\n  SELEC 2;\nSELECT 3;\n"
        // "-- one\n" is 7 characters, "SELECT 1;\n" 10, then two spaces: S is character 20.
        #expect(ScriptLocation(position: 20, in: script) == ScriptLocation(line: 3, column: 3, lineText: "  SELEC 2;"))
    }

    @Test func positionsCountUnicodeScalarsNotBytesOrCharacters() {
        // "é" as e + U+0301 is two scalars and one Swift Character; "✓" is three UTF-8 bytes.
        let script = "-- e\u{301}✓ 🚀\nSELECT x;"
        // Line 1 has 8 scalars ("-- ", e, U+0301, ✓, " ", 🚀) = 3+2+1+1+1 = 8, plus "\n" = 9.
        let location = ScriptLocation(position: 17, in: script)
        #expect(location == ScriptLocation(line: 2, column: 8, lineText: "SELECT x;"))
    }

    @Test func columnsOnALineWithMultibyteText() {
        let script = "SELECT 'héllo', ✓✓ bad;"
        // S=1 … the second ✓ is scalar 18, "b" is 20.
        #expect(ScriptLocation(position: 20, in: script)?.column == 20)
        #expect(ScriptLocation(position: 20, in: script)?.line == 1)
    }

    @Test func carriageReturnLineEndings() {
        let script = "SELECT 1;\r\nSELEC 2;\r\n"
        #expect(ScriptLocation(position: 12, in: script) == ScriptLocation(line: 2, column: 1, lineText: "SELEC 2;"))
    }

    @Test func endOfInputPointsAtTheLastLine() {
        let script = "SELECT (1\n"
        // PostgreSQL reports "syntax error at end of input" one past the last character.
        #expect(ScriptLocation(position: 11, in: script) == ScriptLocation(line: 1, column: 10, lineText: "SELECT (1"))
        #expect(ScriptLocation(position: 10, in: "SELECT (1") == ScriptLocation(line: 1, column: 10, lineText: "SELECT (1"))
    }

    @Test func outOfRangePositions() {
        #expect(ScriptLocation(position: 0, in: "SELECT 1") == nil)
        #expect(ScriptLocation(position: 100, in: "SELECT 1") == nil)
    }
}
