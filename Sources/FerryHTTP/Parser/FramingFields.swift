/// The header fields that decide framing and connection handling, gathered in one pass
/// over the head so that a request costs one scan rather than one per field name.
struct FramingFields {
    var hostCount = 0
    var transferEncoding: [String] = []
    var contentLength: [String] = []
    var connection: [String] = []
    var expect: [String] = []

    init(_ headers: HTTPHeaders) {
        for field in headers.fields {
            // Dispatch on length first: most fields match none of these names.
            switch field.name.utf8.count {
            case 4 where HTTPHeaders.equalNames(field.name, "Host"): hostCount += 1
            case 6 where HTTPHeaders.equalNames(field.name, "Expect"): expect.append(field.value)
            case 10 where HTTPHeaders.equalNames(field.name, "Connection"): connection.append(field.value)
            case 14 where HTTPHeaders.equalNames(field.name, "Content-Length"): contentLength.append(field.value)
            case 17 where HTTPHeaders.equalNames(field.name, "Transfer-Encoding"): transferEncoding.append(field.value)
            default: break
            }
        }
    }
}
