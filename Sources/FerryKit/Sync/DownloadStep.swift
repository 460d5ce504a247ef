import Foundation

/// One step of an initial sync: the rows of one resource, or only those whose
/// `column` equals `value` (the set the user has open), read through Index
/// paging snapshots.
///
/// The app lists the steps it wants first (``SyncEngine/init(store:transport:tokens:policy:resolvers:maxBulk:initialSyncOrder:pageSize:stalledAfter:now:random:)``);
/// every resource then follows whole, parents first. A row that an early step
/// brought comes again with its resource's whole step and applies by revision.
public struct DownloadStep: Sendable, Hashable {
    public let resource: String
    public let column: String?
    public let value: String?

    /// Every row of `resource` the user can read.
    public static func resource(_ resource: String) -> DownloadStep {
        DownloadStep(resource: resource, column: nil, value: nil)
    }

    /// The rows of `resource` whose `column` equals `value`, e.g. the terms of one set.
    public static func rows(of resource: String, where column: String, equals value: String) -> DownloadStep {
        DownloadStep(resource: resource, column: column, value: value)
    }

    /// Path and query of the step's first Index page, in id order, without
    /// public rows (`public=false`): those are the subscriptions', and an
    /// initial sync fills the default stream only.
    ///
    /// Id order fills the local primary key's index at its end. In the
    /// Index's default order (rank, then id, for a ranked resource), each page
    /// held one term of every set, so each page's transaction rewrote nearly
    /// every page of both the id index and the (set, rank) index, and the
    /// bytes written per page grew with the store (bench/ferrykit/README.md, issue 35).
    func path(limit: Int) -> String {
        "/v1/\(PercentEncoding.encoded(resource))?limit=\(limit)&order=id" + Self.privateOnly + filter
    }

    /// Leaves out public rows (docs/API.md, Index).
    static let privateOnly = "&public=false"

    /// The step's identity in the store's progress record.
    var key: String { resource + filter }

    private var filter: String {
        guard let column, let value else { return "" }
        return "&\(PercentEncoding.encoded(column))=\(PercentEncoding.encoded(Self.oneValue(value)))"
    }

    /// `value` as one filter value: in double quotes when a comma would split it into a
    /// list or it starts with a quote (docs/API.md, Index), its quotes and backslashes escaped.
    static func oneValue(_ value: String) -> String {
        guard value.contains(",") || value.hasPrefix("\"") else { return value }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The app's steps (those naming a known resource), then every resource
    /// whole by increasing depth of the reference graph, so that parents arrive
    /// before their children; no step twice.
    static func plan(first: [DownloadStep], schema: ServerSchema) -> [DownloadStep] {
        let depth = UploadPlanner.depths(schema)
        let whole = schema.resources.filter { $0.column("id") != nil }
            .sorted { (depth[$0.name] ?? 0, $0.name) < (depth[$1.name] ?? 0, $1.name) }
            .map { DownloadStep.resource($0.name) }
        var seen = Set<String>()
        return (first.filter { schema[$0.resource] != nil } + whole).filter { seen.insert($0.key).inserted }
    }
}

/// How far an initial sync has come, for a progress bar.
public struct InitialSyncProgress: Sendable, Equatable {
    /// The step under way.
    public var step: DownloadStep
    /// Steps finished, and all steps.
    public var stepsDone: Int
    public var steps: Int
    /// Rows received in this step, and the step's total once its first page told it.
    public var received: Int
    public var total: Int?
}
