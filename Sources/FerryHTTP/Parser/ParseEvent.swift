/// What `RequestParser.next()` found in the bytes buffered so far.
public enum ParseEvent: Sendable {
    /// Nothing more can be decided until more bytes arrive.
    case needMore
    /// The head is complete, the request carries `Expect: 100-continue` and a body, and none of the body
    /// has arrived. Emitted once per such request; the server sends `100 Continue` and calls next() again.
    /// If the head must be refused (e.g. Content-Length over the limit), `.error` comes instead.
    case expectContinue
    /// One complete request, body included.
    case request(HTTPRequest)
    /// The request is refused. After an error with closeConnection == true the parser is dead:
    /// every later next() returns the same error.
    case error(HTTPError)
}
