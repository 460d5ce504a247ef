@testable import Ferry
import Testing

/// `ferry check`'s `localized_messages`: Ferry tells a few refusals apart by PostgreSQL's
/// English words, so errors worded in another language are a warning. (A locale other
/// than C must be installed for PostgreSQL to take one, so the findings are judged here
/// from the facts; `SchemaCheckTests.bothExamplesPass` holds the C locale to none.)
@Suite struct MessagesLanguageTests {
    private func codes(_ locale: String) -> [String] {
        let facts = SchemaFacts(servedSchema: "app", role: "ferry_app", tables: [], messagesLocale: locale)
        return SchemaCheck.findings(facts).map(\.code)
    }

    @Test(arguments: ["de_DE.UTF-8", "fr_FR.utf8", "ja_JP.UTF-8", "pt_BR"])
    func anotherLanguageIsAWarning(locale: String) {
        #expect(codes(locale) == ["localized_messages"], "\(locale)")
        let finding = SchemaCheck.messagesLanguage(
            SchemaFacts(servedSchema: "app", role: "ferry_app", tables: [], messagesLocale: locale))[0]
        #expect(finding.severity == .warning && finding.message.contains(locale))
        #expect(finding.fix == "ALTER ROLE ferry_app SET lc_messages TO 'C' (as a superuser)")
    }

    @Test(arguments: ["C", "C.UTF-8", "C.utf8", "POSIX", "en_US.UTF-8", "en_GB.utf8", "English_United States.1252", ""])
    func englishIsNothingToSay(locale: String) {
        #expect(codes(locale).isEmpty, "\(locale)")
    }
}
