import Testing
@testable import FerryPostgres

@Test func libpqLinks() {
    // libpq 14 introduced pipeline mode, which Ferry depends on.
    #expect(libpqVersion >= 140000)
}
