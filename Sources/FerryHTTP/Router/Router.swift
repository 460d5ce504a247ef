// The trie router: `Router` registers patterns and answers requests (404, 405
// with `Allow`, HEAD as GET), `RouteNode` is one level of the trie matched on
// the path's bytes, filling the `RouteParameters` (Core/RouteParameters.swift)
// that carry the `:name` captures into the `RequestContext`, and
// `ThrowingResponder` turns a thrown error into the refusal's response.

/// Routes requests by method and path pattern to responders.
///
/// Patterns are `/`-separated segments; a segment `:name` captures one path
/// segment. Literal segments win over parameters, whatever the method: a path
/// is matched first, then its methods. A path that matches no pattern is refused
/// with 404 (`routeNotFound`); a method its pattern does not serve with 405
/// (`methodNotAllowed`) and `Allow`. HEAD falls back to GET.
/// The router is itself an `HTTPResponder`, and puts the pattern and the
/// parameters into the handler's `RequestContext`.
public struct Router: HTTPResponder {
    struct Route: Sendable {
        let pattern: String
        let responder: any HTTPResponder
        let inline: Bool
    }

    private var root = RouteNode()
    /// Paths of inline routes without parameters, so the I/O thread can decide
    /// `runsInline` with one set lookup instead of a second route match.
    private var inlineLiteralPaths: Set<String> = []
    /// The longest of them, in bytes: a longer path (any with an id) skips the set's hashing.
    private var longestInlinePath = 0
    /// Whether some inline route has a parameter; then `runsInline` must match.
    private var parameterizedInline = false

    /// Answers the router's refusals, and what its closure routes throw.
    private let refusal: HTTPRefusal

    /// An empty router whose refusals (404, 405, a handler's error) `refusal` answers.
    public init(refusal: @escaping HTTPRefusal = { HTTPResponse.problem($0) }) {
        self.refusal = refusal
    }

    /// Adds a route. `inline: true` lets it run on the I/O thread; only for
    /// handlers that never block (see `HTTPResponder.runsInline`).
    public mutating func add(_ method: String, _ pattern: String, inline: Bool = false, responder: some HTTPResponder) {
        let segments = Self.split(pattern)
        if inline {
            if segments.contains(where: { $0.hasPrefix(":") }) {
                parameterizedInline = true
            } else {
                let path = "/" + segments.joined(separator: "/")
                inlineLiteralPaths.insert(path)
                longestInlinePath = max(longestInlinePath, path.utf8.count)
            }
        }
        root.insert(segments[...], method: method, route: Route(pattern: pattern, responder: responder, inline: inline))
    }

    /// Adds a route answered by a closure. An `HTTPError` it throws is refused as
    /// it says; any other error with 500 (`handlerFailed`).
    public mutating func add(
        _ method: String, _ pattern: String, inline: Bool = false,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) {
        add(method, pattern, inline: inline, responder: ThrowingResponder(handler, refusal: refusal))
    }

    /// Adds a GET route (HEAD is answered by it too).
    public mutating func get(
        _ pattern: String, inline: Bool = false,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) { add("GET", pattern, inline: inline, handler) }

    public mutating func post(
        _ pattern: String, inline: Bool = false,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) { add("POST", pattern, inline: inline, handler) }

    public mutating func put(
        _ pattern: String, inline: Bool = false,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) { add("PUT", pattern, inline: inline, handler) }

    public mutating func patch(
        _ pattern: String, inline: Bool = false,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) { add("PATCH", pattern, inline: inline, handler) }

    public mutating func delete(
        _ pattern: String, inline: Bool = false,
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    ) { add("DELETE", pattern, inline: inline, handler) }

    /// The outcome of routing one method and path.
    public enum Match {
        /// A route answers: its pattern and captured parameters.
        case found(pattern: String, parameters: RouteParameters)
        /// The path exists but not for this method; the methods that would answer.
        case methodNotAllowed(allow: [String])
        /// No pattern matches the path.
        case notFound
    }

    /// Whether `path` (decoded) is `prefix` or under it, segment by segment as routes
    /// match, so empty segments count for nothing: `//console/api` is under `/console`,
    /// as the router answers it from the console's routes; `/consoles` is not.
    public static func path(_ path: String, isUnder prefix: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let wanted = prefix.split(separator: "/", omittingEmptySubsequences: true)
        return segments.count >= wanted.count && zip(segments, wanted).allSatisfy { $0 == $1 }
    }

    /// Routes a method and decoded path without answering.
    public func match(method: String, path: String) -> Match {
        switch resolve(method: method, path: path) {
        case .found(let route, let parameters): .found(pattern: route.pattern, parameters: parameters)
        case .methodNotAllowed(let allow): .methodNotAllowed(allow: allow)
        case .notFound: .notFound
        }
    }

    /// A request routed but not yet answered: for a caller that runs steps
    /// of its own between routing and answering (middleware that needs the
    /// pattern), without matching the path twice.
    public struct Routed: Sendable {
        let resolution: Resolution

        /// The matched pattern; nil when the path matches none, or not for this method.
        public var pattern: String? {
            if case .found(let route, _) = resolution { return route.pattern }
            return nil
        }

        /// The captured parameters (empty unless a pattern matched).
        public var parameters: RouteParameters {
            if case .found(_, let parameters) = resolution { return parameters }
            return RouteParameters()
        }
    }

    /// Routes `request` without answering it; ``respond(to:context:routed:)`` answers.
    public func route(_ request: HTTPRequest) -> Routed {
        Routed(resolution: resolve(method: request.method, path: request.path))
    }

    public func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        respond(to: request, context: context, routed: route(request))
    }

    /// The answer of the route `routed` found (a refusal when none), with
    /// its pattern and parameters put into the handler's context.
    public func respond(to request: HTTPRequest, context: RequestContext, routed: Routed) -> HTTPResponse {
        switch routed.resolution {
        case .found(let route, let parameters):
            var context = context
            context.routePattern = route.pattern
            context.parameters = parameters
            return route.responder.respond(to: request, context: context)
        case .methodNotAllowed(let allow):
            let list = allow.joined(separator: ", ")
            return refusal(
                HTTPError(
                    status: 405, reason: .methodNotAllowed,
                    detail: "\(request.method) is not allowed here; allowed: \(list).",
                    headers: HTTPHeaders([("Allow", list)]), closeConnection: false))
        case .notFound:
            return refusal(
                HTTPError(status: 404, reason: .routeNotFound, detail: "No route matches \(request.path).", closeConnection: false))
        }
    }

    /// Inline when the route says so. Decided by path alone when no inline
    /// route has parameters: a wrong method there answers a cheap 405 inline,
    /// and a path no route matches runs its 404 on a worker like any other.
    public func runsInline(_ request: HTTPRequest) -> Bool {
        guard parameterizedInline else {
            return request.path.utf8.count <= longestInlinePath && inlineLiteralPaths.contains(request.path)
        }
        if case .found(let route, _) = resolve(method: request.method, path: request.path) { return route.inline }
        return true
    }

    enum Resolution: Sendable {
        case found(Route, RouteParameters)
        case methodNotAllowed([String])
        case notFound
    }

    func resolve(method: String, path: String) -> Resolution {
        var path = path
        return path.withUTF8 { bytes in
            let segments = Self.segments(of: bytes)
            var parameters = RouteParameters()
            guard let node = root.find(bytes, segments[...], parameters: &parameters) else { return .notFound }
            guard let route = node.route(serving: method) else { return .methodNotAllowed(node.allowedMethods) }
            return .found(route, parameters)
        }
    }

    /// The byte ranges of the non-empty `/`-separated segments. Splits bytes, not
    /// Characters: a combining mark after a slash must not glue it to the next segment,
    /// and walking grapheme clusters was the largest single cost of routing.
    static func segments(of path: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var segments: [Range<Int>] = []
        segments.reserveCapacity(4)
        var start = 0
        for index in path.indices where path[index] == UInt8(ascii: "/") {
            if start < index { segments.append(start..<index) }
            start = index + 1
        }
        if start < path.count { segments.append(start..<path.count) }
        return segments
    }

    /// The non-empty `/`-separated segments of a pattern.
    static func split(_ pattern: String) -> [Substring] {
        var pattern = pattern
        let ranges = pattern.withUTF8 { segments(of: $0) }
        let utf8 = pattern.utf8
        func index(_ offset: Int) -> String.Index { utf8.index(utf8.startIndex, offsetBy: offset) }
        return ranges.map { Substring(utf8[index($0.lowerBound)..<index($0.upperBound)]) }
    }
}

/// One segment level of the routing tree.
///
/// Every request walks it, so it is matched on the path's UTF-8 bytes: literal
/// children are few per level and compared byte for byte (no String built, nothing
/// hashed), and methods are a short list compared by value.
struct RouteNode: Sendable {
    /// Literal children and their segment's bytes.
    var literals: [(segment: [UInt8], node: RouteNode)] = []
    /// At most one parameter child; an array keeps the recursive struct finite.
    var parameter: [(name: String, node: RouteNode)] = []
    /// The routes ending here, by method.
    var routes: [(method: String, route: Router.Route)] = []

    mutating func insert(_ segments: ArraySlice<Substring>, method: String, route: Router.Route) {
        guard let first = segments.first else {
            if let existing = routes.firstIndex(where: { $0.method == method }) {
                routes[existing].route = route
            } else {
                routes.append((method: method, route: route))
            }
            return
        }
        let rest = segments.dropFirst()
        if first.hasPrefix(":") {
            let name = String(first.dropFirst())
            if parameter.isEmpty { parameter.append((name: name, node: RouteNode())) }
            // One name per position: the first pattern's name wins for later ones too.
            parameter[0].node.insert(rest, method: method, route: route)
        } else {
            let bytes = Array(first.utf8)
            if let existing = literals.firstIndex(where: { $0.segment == bytes }) {
                literals[existing].node.insert(rest, method: method, route: route)
            } else {
                var child = RouteNode()
                child.insert(rest, method: method, route: route)
                literals.append((segment: bytes, node: child))
            }
        }
    }

    /// The first node (literal before parameter, depth first) whose path matches and
    /// that has routes, whatever their methods. `segments` are ranges of `path`'s bytes.
    ///
    /// The method is checked only on the node found: a path that a literal pattern
    /// spells out (`/v1/auth/me`) belongs to that pattern, so a method it does not
    /// serve answers 405 rather than falling through to a parameter pattern
    /// (`/v1/:resource/:id`) that would take "auth" for a resource and answer 404.
    func find(
        _ path: UnsafeBufferPointer<UInt8>, _ segments: ArraySlice<Range<Int>>, parameters: inout RouteParameters
    ) -> RouteNode? {
        guard let first = segments.first else { return routes.isEmpty ? nil : self }
        let rest = segments.dropFirst()
        let segment = UnsafeBufferPointer(rebasing: path[first])
        for literal in literals where literal.segment.count == segment.count && literal.segment.elementsEqual(segment) {
            if let hit = literal.node.find(path, rest, parameters: &parameters) { return hit }
        }
        if let param = parameter.first {
            // Room for every parameter the path could still hold: the pairs grow once, not per segment.
            if parameters.pairs.isEmpty { parameters.reserveCapacity(segments.count) }
            parameters.append(param.name, String(decoding: segment, as: UTF8.self))
            if let hit = param.node.find(path, rest, parameters: &parameters) { return hit }
            parameters.removeLast()
        }
        return nil
    }

    /// The route for `method` here; HEAD falls back to GET.
    func route(serving method: String) -> Router.Route? {
        if let route = route(for: method) { return route }
        if method == "HEAD" { return route(for: "GET") }
        return nil
    }

    private func route(for method: String) -> Router.Route? {
        for entry in routes where entry.method == method { return entry.route }
        return nil
    }

    /// Methods for `Allow`, HEAD included where GET is.
    var allowedMethods: [String] {
        var methods = Set(routes.map(\.method))
        if methods.contains("GET") { methods.insert("HEAD") }
        return methods.sorted()
    }
}

/// Wraps a throwing handler so that an error becomes a refusal's response,
/// never a dropped connection.
struct ThrowingResponder: HTTPResponder {
    let handler: @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
    let refusal: HTTPRefusal

    init(
        _ handler: @escaping @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse,
        refusal: @escaping HTTPRefusal
    ) {
        self.handler = handler
        self.refusal = refusal
    }

    func respond(to request: HTTPRequest, context: RequestContext) -> HTTPResponse {
        do {
            return try handler(request, context)
        } catch let error as HTTPError {
            return refusal(error)
        } catch {
            context.logger.error("handler failed: \(String(describing: error))")
            return refusal(
                HTTPError(
                    status: 500, reason: .handlerFailed, detail: "The server failed to answer this request.",
                    closeConnection: false))
        }
    }
}
