@testable import FerryHTTP
import Testing

@Suite("HTTPCompression: which Content-Types compress")
struct HTTPCompressionContentTypeTests {
    @Test(arguments: [
        ("application/json", true), ("Application/JSON; charset=utf-8", true), ("  application/json  ;q", true),
        ("application/problem+json", true), ("application/vnd.api+JSON", true), ("application/+json", true),
        ("application/json;", true), ("\tapplication/json", true),
        ("application/jsonx", false), ("application/json5", false), ("text/json", false), ("application/xml", false),
        ("application/", false), ("", false), ("application/js", false), ("applicatio/json", false),
        ("application/json+xml", false), ("text/plain; x=application/json", false),
    ])
    func jsonTypesAndOnlyThoseCompress(contentType: String, compresses: Bool) {
        #expect(HTTPCompression.compresses(contentType: contentType) == compresses, "\(contentType)")
    }
}
