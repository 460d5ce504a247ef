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
