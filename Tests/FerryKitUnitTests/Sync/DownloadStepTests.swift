@testable import FerryKit
import Testing

/// The initial sync's Index requests, without a server.
struct DownloadStepTests {
    /// Pages in id order append to the local id index; in the Index's default
    /// (rank, id) order every page of terms held one term of every set, and
    /// each page's transaction rewrote most of the store's index pages: an
    /// initial sync's cost grew with the store (issue 35, bench/ferrykit/README.md).
    @Test func pagesAreAskedForInIdOrder() {
        #expect(DownloadStep.resource("terms").path(limit: 1_000) == "/v1/terms?limit=1000&order=id&public=false")
        #expect(
            DownloadStep.rows(of: "terms", where: "set_id", equals: "a b").path(limit: 3) == "/v1/terms?limit=3&order=id&public=false&set_id=a%20b")
    }

    /// The step's key (stored with an initial sync's progress) does not carry
    /// the order: progress saved before it was added still matches its step.
    @Test func theKeyIsTheResourceAndFilterAlone() {
        #expect(DownloadStep.resource("terms").key == "terms")
        #expect(DownloadStep.rows(of: "terms", where: "set_id", equals: "s").key == "terms&set_id=s")
    }
}
