import Foundation

/// What `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` says actually ran.
///
/// Tests about cost assert on this rather than on plan text: a node marked
/// "never executed" costs nothing, and which plan the planner picks for such a
/// branch changes with point releases and statistics.
public struct ExecutedPlan: Sendable {
    /// One executed node (`Actual Loops` > 0).
    public struct Node: Sendable, CustomStringConvertible {
        /// `Node Type`, e.g. "Seq Scan", "Index Scan", "Bitmap Heap Scan".
        public let type: String
        /// `Relation Name` for scans of a table, without its schema.
        public let relation: String?
        /// `Index Name` for index scans.
        public let index: String?
        /// How many times the node ran.
        public let loops: Int
        /// Rows it returned per loop, on average.
        public let rows: Double
        /// Shared buffers hit or read by this node and its children.
        public let buffers: Int
        /// Depth in the tree, for the text form.
        let depth: Int

        public var description: String {
            let on = relation.map { " on \($0)" } ?? ""
            let using = index.map { " using \($0)" } ?? ""
            return String(repeating: "  ", count: depth) + "\(type)\(using)\(on) (rows=\(rows) loops=\(loops) buffers=\(buffers))"
        }
    }

    /// Every executed node, depth first.
    public let executed: [Node]
    /// Shared buffers hit or read by the whole statement.
    public let buffers: Int
    /// `Execution Time`, for printing only: tests do not assert on time.
    public let executionMs: Double
    /// `Planning Time`, for printing only.
    public let planningMs: Double
    /// Functions JIT-compiled for the statement; 0 when JIT did not run.
    public let jitFunctions: Int

    /// The executed nodes, one per line, indented by depth.
    public var text: String { executed.map(\.description).joined(separator: "\n") }

    /// Parses the single row that `EXPLAIN (..., FORMAT JSON)` returns.
    public init(json: String) throws {
        guard let top = (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])?.first,
            let plan = top["Plan"] as? [String: Any]
        else {
            throw TestEnvironment.Missing(description: "not an EXPLAIN (FORMAT JSON) result: \(json.prefix(200))")
        }
        var nodes: [Node] = []
        func walk(_ node: [String: Any], depth: Int) {
            let loops = node["Actual Loops"] as? Int ?? 0
            guard loops > 0 else { return }  // never executed, and neither were its children
            nodes.append(
                Node(
                    type: node["Node Type"] as? String ?? "?", relation: node["Relation Name"] as? String,
                    index: node["Index Name"] as? String, loops: loops,
                    rows: (node["Actual Rows"] as? NSNumber)?.doubleValue ?? 0,
                    buffers: (node["Shared Hit Blocks"] as? Int ?? 0) + (node["Shared Read Blocks"] as? Int ?? 0), depth: depth))
            for child in node["Plans"] as? [[String: Any]] ?? [] { walk(child, depth: depth + 1) }
        }
        walk(plan, depth: 0)
        executed = nodes
        buffers = (plan["Shared Hit Blocks"] as? Int ?? 0) + (plan["Shared Read Blocks"] as? Int ?? 0)
        executionMs = (top["Execution Time"] as? NSNumber)?.doubleValue ?? -1
        planningMs = (top["Planning Time"] as? NSNumber)?.doubleValue ?? -1
        jitFunctions = (top["JIT"] as? [String: Any])?["Functions"] as? Int ?? 0
    }

    /// Executed sequential scans of any of `tables`, as text.
    public func executedSeqScans(of tables: Set<String>) -> [String] {
        executed.filter { $0.type == "Seq Scan" && tables.contains($0.relation ?? "") }.map(\.description)
    }
}
