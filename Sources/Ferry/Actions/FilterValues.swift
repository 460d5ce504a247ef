/// A filter's values as `?<column>=` gives them (docs/API.md, Index): a comma-separated
/// list (IN), each value taken as it is, or in double quotes, which may hold commas:
/// `?tag="Smith, John",Jones` is two values. Inside quotes a backslash takes the next
/// character as it is (`\"` a quote, `\\` a backslash). Without quotes a value with a
/// comma could not be filtered at all, since every comma split the list; PostgREST's
/// `in.(...)` quotes the same way.
enum FilterValues {
    /// The values of `text` (the query parameter, percent-decoded); 400 `invalid_query`
    /// naming `column` for a quote left open or text after a closing quote.
    static func parse(_ text: String, column: String) throws -> [String] {
        var values: [String] = []
        var index = text.startIndex
        while true {
            if index < text.endIndex, text[index] == "\"" {
                var value = ""
                index = text.index(after: index)
                var closed = false
                while index < text.endIndex {
                    let character = text[index]
                    index = text.index(after: index)
                    if character == "\"" {
                        closed = true
                        break
                    }
                    if character == "\\" {
                        guard index < text.endIndex else { break }
                        value.append(text[index])
                        index = text.index(after: index)
                    } else {
                        value.append(character)
                    }
                }
                guard closed else { throw IndexQuery.invalid("a quoted value of \(column) has no closing quote") }
                guard index == text.endIndex || text[index] == "," else {
                    throw IndexQuery.invalid("a quoted value of \(column) must end at its closing quote, before a comma")
                }
                values.append(value)
            } else {
                let end = text[index...].firstIndex(of: ",") ?? text.endIndex
                values.append(String(text[index..<end]))
                index = end
            }
            guard index < text.endIndex else { return values }
            index = text.index(after: index)  // the comma
        }
    }
}
