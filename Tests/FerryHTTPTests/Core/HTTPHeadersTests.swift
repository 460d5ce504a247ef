import Testing
@testable import FerryHTTP

@Suite struct HTTPHeadersTests {
    @Test func namesCompareCaseInsensitivelyForLettersOnly() {
        #expect(HTTPHeaders.equalNames("Content-Length", "content-length"))
        #expect(HTTPHeaders.equalNames("X-REQUEST-ID", "x-request-id"))
        #expect(!HTTPHeaders.equalNames("a^b", "a~b"))
        #expect(!HTTPHeaders.equalNames("a@", "a`"))
        #expect(!HTTPHeaders.equalNames("Host", "Hos"))
    }

    @Test func repeatedFieldsKeepTheirOrder() {
        var headers = HTTPHeaders([("Accept", "a"), ("accept", "b")])
        #expect(headers.values("ACCEPT") == ["a", "b"])
        #expect(headers["Accept"] == "a")
        headers.replace("Accept", "c")
        #expect(headers.values("accept") == ["c"])
        headers.remove("accept")
        #expect(!headers.contains("Accept"))
    }
}
