@testable import FerryKit
import Testing

/// NetworkMonitor's decision (Apple platforms only), run on every platform.
@Suite struct PathChangesTests {
    @Test func theFirstReportIsThePathAsItIsNotAChange() {
        var online = PathChanges()
        let onlineWoke = online.report(satisfied: true)
        #expect(!onlineWoke)
        var offline = PathChanges()
        let offlineWoke = offline.report(satisfied: false)
        #expect(!offlineWoke)
    }

    @Test func onlyAPathThatBecomesUsableWakesTheEngine() {
        var changes = PathChanges()
        let reports = [false, false, true, true, false, true, false, false, true]
        let woke = reports.map { changes.report(satisfied: $0) }
        #expect(woke == [false, false, true, false, false, true, false, false, true])
    }
}
