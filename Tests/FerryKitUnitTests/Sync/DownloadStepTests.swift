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

    /// A value with a comma is one value in double quotes (the server splits a list at
    /// commas outside quotes), and so is one that starts with a quote; a resource
    /// name or value past ASCII is percent-encoded byte by byte.
    @Test func aValueWithACommaIsQuotedAndNamesAreEncoded() {
        #expect(
            DownloadStep.rows(of: "notes", where: "tag", equals: "Smith, John").path(limit: 3)
                == "/v1/notes?limit=3&order=id&public=false&tag=%22Smith%2C%20John%22")
        #expect(DownloadStep.rows(of: "notes", where: "tag", equals: #""a\"#).path(limit: 3).hasSuffix("&tag=%22%5C%22a%5C%5C%22"))
        #expect(DownloadStep.rows(of: "notes", where: "tag", equals: #"5"x"#).path(limit: 3).hasSuffix("&tag=5%22x"))
        #expect(DownloadStep.resource("Café notes").path(limit: 3).hasPrefix("/v1/Caf%C3%A9%20notes?"))
    }

    /// The step's key (stored with an initial sync's progress) does not carry
    /// the order: progress saved before it was added still matches its step.
    @Test func theKeyIsTheResourceAndFilterAlone() {
        #expect(DownloadStep.resource("terms").key == "terms")
        #expect(DownloadStep.rows(of: "terms", where: "set_id", equals: "s").key == "terms&set_id=s")
    }
}
