/// One segment level of the routing tree.
struct RouteNode: Sendable {
    var literals: [String: RouteNode] = [:]
    /// The longest literal child, in UTF-8 bytes. A longer segment (an id, say)
    /// cannot be a literal, so `find` skips building a String to look it up.
    var longestLiteral = 0
    /// At most one parameter child; an array keeps the recursive struct finite.
    var parameter: [(name: String, node: RouteNode)] = []
    var routes: [String: Router.Route] = [:]

    mutating func insert(_ segments: ArraySlice<Substring>, method: String, route: Router.Route) {
        guard let first = segments.first else {
            routes[method] = route
            return
        }
        let rest = segments.dropFirst()
        if first.hasPrefix(":") {
            let name = String(first.dropFirst())
            if parameter.isEmpty { parameter.append((name: name, node: RouteNode())) }
            // One name per position: the first pattern's name wins for later ones too.
            parameter[0].node.insert(rest, method: method, route: route)
        } else {
            longestLiteral = max(longestLiteral, first.utf8.count)
            literals[String(first), default: RouteNode()].insert(rest, method: method, route: route)
        }
    }

    /// The first node (literal before parameter, depth first) whose path matches
    /// and that serves `method` (any method when nil), with the route for it.
    func find(
        _ segments: ArraySlice<Substring>, method: String?, parameters: inout RouteParameters
    ) -> (RouteNode, Router.Route?)? {
        guard let first = segments.first else {
            guard !routes.isEmpty else { return nil }
            guard let method else { return (self, nil) }
            if let route = routes[method] { return (self, route) }
            if method == "HEAD", let route = routes["GET"] { return (self, route) }
            return nil
        }
        let rest = segments.dropFirst()
        if first.utf8.count <= longestLiteral, let child = literals[String(first)],
            let hit = child.find(rest, method: method, parameters: &parameters) {
            return hit
        }
        if let param = parameter.first {
            // Room for every parameter the path could still hold: the pairs grow once, not per segment.
            if parameters.pairs.isEmpty { parameters.reserveCapacity(segments.count) }
            parameters.append(param.name, String(first))
            if let hit = param.node.find(rest, method: method, parameters: &parameters) { return hit }
            parameters.removeLast()
        }
        return nil
    }

    /// Methods for `Allow`, HEAD included where GET is.
    var allowedMethods: [String] {
        var methods = Set(routes.keys)
        if methods.contains("GET") { methods.insert("HEAD") }
        return methods.sorted()
    }
}
