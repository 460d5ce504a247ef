import Ferry
import FerryHTTPTestSupport
import FerryPostgres
import FerryTestSupport
import Foundation
import Testing

/// The console in a real browser: headless Chromium against a real `ferry
/// serve`, as an operator uses it. Each test saves a screenshot under
/// `.build/test-artifacts/console/` (or `$FERRY_TEST_ARTIFACTS/console/`).
@Suite(.serialized) struct ConsoleBrowserTests {
    @Test func signIn() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.chromium.open(story.base + "/console/")
        try browser.chromium.waitFor("document.querySelector('#signin')", "the sign-in form")
        try browser.chromium.type("#signin-name", "dana")
        try browser.chromium.type("#signin-password", "wrong-password")
        try browser.chromium.click("#signin-submit")
        try browser.chromium.waitFor("document.querySelector('#signin .error')", "the refusal")
        #expect(try browser.chromium.text("#signin .error").contains("401"))
        try browser.chromium.type("#signin-password", "dana-password")
        try browser.chromium.click("#signin-submit")
        try browser.chromium.waitFor("document.querySelector('#resources')", "the resources")
        #expect(try browser.chromium.text("#operator-name") == "dana (admin)")
        #expect(try browser.chromium.text("#resources").contains("study_sets"))
        try browser.finish("sign-in")
    }

    /// Browsing a resource, where a set's title is an attack: it shows as text.
    @Test func browseAResourceWithHostileText() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/resources/study_sets/rows")
        try browser.chromium.waitFor("document.querySelector('#rows')", "the rows")
        let title = BrowserFixture.hostileTitle
        #expect(try browser.chromium.text("#rows").contains(title))
        #expect(try browser.chromium.evaluate("document.querySelectorAll('#main img, #main script').length") as? Int == 0)
        // The row's history: the last writer by name.
        try browser.chromium.click("#rows tr[data-id='\(story.hostileSet)']")
        try browser.chromium.waitFor("document.querySelector('#history')", "the history")
        #expect(try browser.chromium.text("#writer").contains("gina"))
        #expect(try browser.chromium.text("#fields").contains(title))
        #expect(try browser.chromium.evaluate("document.querySelectorAll('img').length") as? Int == 0)
        #expect(!browser.chromium.dialogOpened, "a script ran: alert opened")
        try browser.finish("browse-resource")
    }

    /// The filter of a resource's rows offers columns typed with a domain by their base type:
    /// the study example's `terms.word` is `app.term_word`, a domain over text.
    @Test func aDomainColumnIsFilterable() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/resources/terms/rows")
        try browser.chromium.waitFor("document.querySelector('#filter-column')", "the filter")
        let offered =
            try browser.chromium.evaluate("[...document.querySelectorAll('#filter-column option')].map((o) => o.value).join(',')") as? String
            ?? ""
        let columns = Set(offered.split(separator: ",").map(String.init))
        #expect(columns.isSuperset(of: ["set_id", "word", "definition", "rank"]), "\(offered)")
        try browser.finish("domain-filter")
    }

    /// A title with a right-to-left override, which would display as
    /// "invoice_exe.pdf": the console shows the control as `[U+202E]`, in place
    /// of the character, in the list, the row's fields and the tooltip (issue 48).
    @Test func invisibleCharactersAreShown() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/resources/study_sets/rows")
        try browser.chromium.waitFor("document.querySelector('#rows')", "the rows")
        let shown = "invoice_[U+202E]fdp.exe"
        #expect(try browser.chromium.text("#rows").contains(shown))
        #expect(try browser.chromium.evaluate("document.querySelector('#rows').textContent.includes('\\u202E')") as? Bool == false)
        #expect(try browser.chromium.evaluate("document.querySelectorAll('#rows .invisible').length") as? Int == 1)
        #expect(
            try browser.chromium.evaluate("[...document.querySelectorAll('#rows td')].some((td) => td.title === 'invoice_[U+202E]fdp.exe')") as? Bool
                == true)
        try browser.chromium.click("#rows tr[data-id='\(story.bidiSet)']")
        try browser.chromium.waitFor("document.querySelector('#fields')", "the row")
        #expect(try browser.chromium.text("#fields").contains(shown))
        // last_modified reads as a time, not milliseconds (issue 48).
        let modified =
            try browser.chromium.evaluate(
                "[...document.querySelectorAll('#fields tr')].find((tr) => tr.cells[0].textContent === 'last_modified').cells[1].textContent")
            as? String ?? ""
        #expect(modified.range(of: #"^20\d\d-\d\d-\d\d \d\d:\d\d:\d\dZ$"#, options: .regularExpression) != nil, "\(modified)")
        try browser.finish("invisible-characters")
    }

    /// "See as a user" for a collaborator who was removed, from the cursor their device held.
    @Test func seeAsARevokedCollaborator() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/users")
        try browser.chromium.waitFor("document.querySelector('#users')", "the users")
        try browser.chromium.click("#users tr[data-user='\(story.friend.id)']")
        try browser.chromium.waitFor("document.querySelector('#readable')", "what hank may read")
        #expect(try browser.chromium.text("#user-name") == "hank")
        try browser.chromium.type("#cursor", story.cursor)
        try browser.chromium.click("#cursor-submit")
        try browser.chromium.waitFor("document.querySelector('#notes')", "the explanation")
        let notes = try browser.chromium.text("#notes")
        #expect(notes.contains("Access to study_sets \(story.set) was revoked"), "\(notes)")
        #expect(notes.contains("1 study_sets, 3 terms"), "\(notes)")
        #expect(try browser.chromium.text("#feed-status") == "200")
        let revoked = try browser.chromium.evaluate(
            "[...document.querySelectorAll('#changes tbody tr')].filter(r => r.innerText.includes('revoked')).length")
        #expect(revoked as? Int == 4)
        // hank may read nothing of the set any more.
        #expect(try browser.chromium.text("#readable tr[data-resource='terms']").contains("0"))
        try browser.finish("see-as-user")

        // The owner's rows as they read them: last_modified a time for people, as CONSOLE.md
        // says (it showed the stored milliseconds).
        try browser.go(story, "#/users/\(story.owner.id)?rows=study_sets")
        try browser.chromium.waitFor("document.querySelector('#user-rows-table tbody tr')", "the owner's sets")
        let headers = try browser.chromium.evaluate("[...document.querySelectorAll('#user-rows-table th')].map(t => t.innerText)") as? [String] ?? []
        let column = try #require(headers.firstIndex { $0.lowercased().contains("last_modified") }, "\(headers)")
        let cell =
            try browser.chromium.evaluate(
                "document.querySelectorAll('#user-rows-table tbody tr')[0].children[\(column)].innerText") as? String ?? ""
        #expect(cell.range(of: #"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z$"#, options: .regularExpression) != nil, "\(cell)")
    }

    /// "See as a user" for a subscription: the stream picked, the id typed; the set's owner
    /// is sent its rows, the removed collaborator is answered as for a stream that does not exist.
    @Test func seeWhatASubscriptionWouldSend() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/users/\(story.owner.id)")
        try browser.chromium.waitFor("document.querySelector('#streams')", "the app's streams")
        #expect(try browser.chromium.text("#streams tr[data-stream='set']").contains("study_sets"))
        try browser.chromium.type("#stream-name", "set")
        try browser.chromium.type("#stream-id", story.set)
        try browser.chromium.click("#cursor-submit")
        try browser.chromium.waitFor("document.querySelector('#notes')", "the explanation")
        #expect(try browser.chromium.text("#notes").contains("The user reads study_sets \(story.set)"))
        #expect(try browser.chromium.text("#feed-stream").contains("set:\(story.set)"))
        #expect(try browser.chromium.text("#summary tr[data-resource='terms']").contains("3"))
        // The removed collaborator: the same stream, answered as absent: none of the set's rows
        // (their own collaborator row's tombstone, which they still read, aside).
        try browser.go(story, "#/users/\(story.friend.id)?stream=set:\(story.set)")
        try browser.chromium.waitFor("document.querySelector('#notes li[data-kind=stream_absent]')", "the stream answered as absent")
        let shown = try browser.chromium.evaluate(
            "[...document.querySelectorAll('#changes tbody tr')].map(r => r.dataset.resource + '/' + r.dataset.id).join(' ')")
        print("as absent, the feed sent: \(shown ?? "")")
        #expect(
            try browser.chromium.evaluate(
                "document.querySelectorAll('#changes tbody tr[data-resource=study_sets], #changes tbody tr[data-resource=terms]').length") as? Int
                == 0)
        #expect(try browser.chromium.evaluate("document.querySelector('#stream-name').value") as? String == "set")
        try browser.finish("see-a-subscription")
    }

    @Test func findARefusedWrite() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/users/\(story.friend.id)")
        try browser.chromium.waitFor("document.querySelector('#refusals')", "the refusals")
        let refusals = try browser.chromium.text("#refusals")
        #expect(refusals.contains("PATCH /v1/study_sets/\(story.set)"), "\(refusals)")
        #expect(refusals.contains("404 not_found"), "\(refusals)")
        try browser.chromium.click("#refusals details summary")
        #expect(try browser.chromium.text("#refusals pre").contains("\"code\": \"not_found\""))
        try browser.finish("refused-write")
    }

    @Test func watchAChartUpdate() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/health")
        try browser.chromium.waitFor("Number(document.querySelector('#chart-pool')?.dataset.samples) >= 1", "the first sample")
        // Traffic while the page samples: the requests chart goes above zero.
        let client = TestHTTPClient(port: story.serve.port)
        let deadline = Date().addingTimeInterval(15)
        var rate = 0.0
        while Date() < deadline, rate <= 0 {
            for _ in 0..<20 { _ = try client.request("GET", "/v1/study_sets", headers: [("Authorization", "Bearer \(story.owner.token)")]) }
            let latest = try browser.chromium.evaluate("document.querySelector('#chart-requests').dataset.latest || '[0]'") as? String ?? "[0]"
            rate = ((try? JSONSerialization.jsonObject(with: Data(latest.utf8))) as? [Any])?.first as? Double ?? 0
        }
        #expect(rate > 0, "the requests chart never rose")
        // For the documentation's screenshot, a longer run: FERRY_TEST_CONSOLE_HEALTH_SAMPLES=20.
        let wanted = Int(ProcessInfo.processInfo.environment["FERRY_TEST_CONSOLE_HEALTH_SAMPLES"] ?? "") ?? 0
        while (try browser.chromium.evaluate("Number(document.querySelector('#chart-requests').dataset.samples)") as? Int ?? 0) < wanted {
            for index in 0..<Int.random(in: 5...60) {
                _ = try client.request(
                    "GET", index % 9 == 0 ? "/v1/nope" : "/v1/study_sets", headers: [("Authorization", "Bearer \(story.owner.token)")])
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let samples = try browser.chromium.evaluate("Number(document.querySelector('#chart-requests').dataset.samples)") as? Int ?? 0
        #expect(samples >= 1)
        #expect(try browser.chromium.text("#memcached-state").hasPrefix("up"))
        try browser.finish("health")
    }

    /// A write asks first (in the page's own dialog), then takes effect.
    @Test func revokeATokenAfterConfirming() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/users/\(story.owner.id)")
        try browser.chromium.waitFor("document.querySelector('#tokens [data-revoke]')", "the tokens")
        try browser.chromium.click("#tokens [data-revoke]")
        try browser.chromium.waitFor("document.querySelector('#confirm').open", "the confirmation")
        try browser.chromium.screenshot("revoke-confirm", in: BrowserFixture.artifacts)
        try browser.chromium.click("#confirm-cancel")
        #expect(
            try TestHTTPClient(port: story.serve.port).request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(story.owner.token)")])
                .status == 200)
        try browser.chromium.click("#tokens [data-revoke]")
        try browser.chromium.waitFor("document.querySelector('#confirm').open", "the confirmation")
        try browser.chromium.click("#confirm-ok")
        try browser.chromium.waitFor("!document.querySelector('#tokens [data-revoke]') && document.querySelector('#tokens')", "the revoked token")
        #expect(
            try TestHTTPClient(port: story.serve.port).request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(story.owner.token)")])
                .status == 401)
        try browser.go(story, "#/audit")
        try browser.chromium.waitFor("document.querySelector('#audit tr[data-action=\"revoke_token\"]')", "the audit entry")
        try browser.finish("revoke-token")
    }

    /// Issue 48: a reference is a link to the row it names (a user id to the
    /// user's page), in the list and in a row's fields, and a row's
    /// `last_modified` reads as a time.
    @Test func followAReferenceToItsRow() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/resources/terms/rows")
        try browser.chromium.waitFor("document.querySelector('#rows a.reference[data-reference=\"study_sets\"]')", "the reference links")
        #expect(try browser.chromium.evaluate("document.querySelector('#rows a.reference').textContent") as? String == story.set)
        try browser.chromium.click("#rows a.reference")
        try browser.chromium.waitFor("document.querySelector('#history')", "the referenced row")
        #expect(try browser.chromium.evaluate("location.hash") as? String == "#/resources/study_sets/rows/\(story.set)")
        #expect(try browser.chromium.text("#fields").contains("Spanish verbs"))
        // A user id (a reference to ferry.users) links to the user's page.
        #expect(
            try browser.chromium.evaluate("document.querySelector('#fields a.reference[data-reference=\"users\"]').getAttribute('href')")
                as? String == "#/users/\(story.owner.id)")
        #expect(try browser.chromium.text("#history").range(of: #"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z"#, options: .regularExpression) != nil)
        try browser.finish("follow-reference")
    }

    /// Issue 48: an admin disables a user from their page (after confirming), the
    /// user's token stops at once, and the audit log finds the entry by search,
    /// with a link to the user.
    @Test func disableAUserAndFindItInTheAudit() throws {
        let (story, browser) = try BrowserFixture.start()
        try browser.signIn(story)
        try browser.go(story, "#/users/\(story.friend.id)")
        try browser.chromium.waitFor("document.querySelector('#user-disable')", "the disable button")
        try browser.chromium.click("#user-disable")
        try browser.chromium.waitFor("document.querySelector('#confirm').open", "the confirmation")
        try browser.chromium.click("#confirm-ok")
        try browser.chromium.waitFor("document.querySelector('#user-enable')", "the user shown disabled")
        #expect(
            try TestHTTPClient(port: story.serve.port).request("GET", "/v1/auth/me", headers: [("Authorization", "Bearer \(story.friend.token)")])
                .status == 401)
        try browser.go(story, "#/audit?search=disable")
        try browser.chromium.waitFor("document.querySelector('#audit tr[data-action=\"disable_user\"] a.user-link')", "the audit entry")
        let actions = try browser.chromium.evaluate("[...document.querySelectorAll('#audit tbody tr')].map(r => r.dataset.action).join(',')")
        #expect(actions as? String == "disable_user")
        try browser.finish("disable-user")
    }

    /// Issue 48: a JWT user (made here as `ferry.sign_in_external` makes one,
    /// with a recorded request; JWTUserLookupTests and ConsoleJWTUserTests do
    /// it over HTTP) is found in the list by their email, and their page shows
    /// it and their last request as a time.
    @Test func aJWTUsersLastRequestAndEmail() throws {
        let (story, browser) = try BrowserFixture.start()
        let owner = try story.database.connect()
        defer { owner.close() }
        let id = try #require(
            try owner.query("SELECT ferry.sign_in_external('https://idp.test', 'june-sub', '{}', 'june@example.com')").rows[0][0])
        _ = try owner.query(
            "SELECT ferry.record_user_uses(jsonb_build_array(jsonb_build_object('user', $1::uuid, 'at', 1798000000000)))", [id])
        try browser.signIn(story)
        try browser.go(story, "#/users?search=june@")
        try browser.chromium.waitFor("document.querySelector('#users tr[data-user]')", "the user list")
        #expect(try browser.chromium.text("#users").contains("june@example.com"))
        try browser.chromium.click("#users tr[data-user] a")
        try browser.chromium.waitFor("document.querySelector('#user-last-used')", "the user's last request")
        #expect(try browser.chromium.text("#user-name") == "june@example.com")
        #expect(try browser.chromium.text("#user-lookup-name").contains("june@example.com"))
        #expect(try browser.chromium.text("#user-last-used").contains("2026-12-23 04:26:40Z"))
        try browser.finish("jwt-user")
    }
}

/// One scenario's world: a migrated database with the collaborator story and
/// a hostile title, `ferry serve` on it, an admin operator, and Chromium.
struct BrowserFixture {
    static let hostileTitle = "<img src=x onerror=alert(1)>"
    static let bidiTitle = "invoice_\u{202E}fdp.exe"

    /// Where screenshots go.
    static var artifacts: URL {
        let base =
            ProcessInfo.processInfo.environment["FERRY_TEST_ARTIFACTS"].map { URL(fileURLWithPath: $0) }
            ?? TestEnvironment.repositoryRoot.appendingPathComponent(".build/test-artifacts")
        return base.appendingPathComponent("console")
    }

    final class Story {
        let database: ScratchDatabase
        let serve: FerryServeProcess
        var owner: (id: String, token: String) = ("", "")
        var friend: (id: String, token: String) = ("", "")
        var set = ""
        var hostileSet = ""
        var bidiSet = ""
        var cursor = ""
        var base: String { "http://127.0.0.1:\(serve.port)" }

        init() throws {
            database = try ScratchDatabase()
            serve = try FerryServeProcess(databaseURL: database.appURL)
        }

        deinit {
            serve.kill()
            database.drop()
        }
    }

    final class Browser {
        let chromium: Chromium
        init() throws { chromium = try Chromium() }

        func signIn(_ story: Story) throws {
            try chromium.open(story.base + "/console/")
            try chromium.waitFor("document.querySelector('#signin')", "the sign-in form")
            try chromium.type("#signin-name", "dana")
            try chromium.type("#signin-password", "dana-password")
            try chromium.click("#signin-submit")
            try chromium.waitFor("document.querySelector('#resources')", "the resources")
        }

        func go(_ story: Story, _ fragment: String) throws {
            try chromium.evaluate("location.hash = \(Chromium.quoted(fragment))")
        }

        /// Saves the screenshot, then checks the page broke no rule of its policy and threw nothing.
        func finish(_ name: String) throws {
            let path = try chromium.screenshot(name, in: BrowserFixture.artifacts)
            print("screenshot: \(path)")
            #expect(chromium.problems.isEmpty, "\(chromium.problems)")
            #expect(!chromium.dialogOpened)
        }
    }

    static func start() throws -> (Story, Browser) {
        let story = try Story()
        let owner = try story.database.connect()
        defer { owner.close() }
        _ = try OperatorAccounts.create(name: "dana", password: "dana-password", role: "admin", connection: owner)
        let ownerToken = try TestServerless.token(owner, user: "gina")
        let friendToken = try TestServerless.token(owner, user: "hank")
        story.owner = (try id(owner, "gina"), ownerToken)
        story.friend = (try id(owner, "hank"), friendToken)
        let client = TestHTTPClient(port: story.serve.port)
        func call(_ method: String, _ path: String, _ token: String, _ json: Any? = nil) throws -> TestHTTPClient.Response {
            try client.request(method, path, headers: [("Authorization", "Bearer \(token)")], json: json)
        }
        story.hostileSet = try call("POST", "/v1/study_sets", story.owner.token, ["title": hostileTitle]).object["id"] as? String ?? ""
        story.bidiSet = try call("POST", "/v1/study_sets", story.owner.token, ["title": bidiTitle]).object["id"] as? String ?? ""
        story.set = try call("POST", "/v1/study_sets", story.owner.token, ["title": "Spanish verbs"]).object["id"] as? String ?? ""
        let terms = try call(
            "POST", "/v1/terms", story.owner.token, ["ser", "estar", "ir"].map { ["set_id": story.set, "word": $0, "rank": "last"] })
        var wanted = Set((terms.json as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } + [story.set])
        let collaborator = try call("POST", "/v1/set_collaborators", story.owner.token, ["set_id": story.set, "user_id": story.friend.id])
        // hank's device syncs until it has the set and its terms (once older transactions of the cluster end).
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let page = try call("GET", "/v1/changes" + (story.cursor.isEmpty ? "" : "?since=\(story.cursor)"), story.friend.token).object
            story.cursor = page["cursor"] as? String ?? story.cursor
            for change in page["changes"] as? [[String: Any]] ?? [] { wanted.remove((change["data"] as? [String: Any])?["id"] as? String ?? "") }
            if page["has_more"] as? Bool == true { continue }
            if wanted.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        _ = try call("DELETE", "/v1/set_collaborators/\(collaborator.object["id"] as? String ?? "")?revision=1", story.owner.token)
        // The feed serves the revocation once older transactions of the cluster end (the cursor stays).
        _ = eventually(within: 20, every: 0.02) {
            let page = (try? call("GET", "/v1/changes?since=\(story.cursor)", story.friend.token).object) ?? [:]
            return (page["changes"] as? [[String: Any]] ?? []).contains { ($0["data"] as? [String: Any])?["revoked"] as? Bool == true }
        }
        // hank's device, not yet told, edits the set: refused.
        _ = try call("PATCH", "/v1/study_sets/\(story.set)", story.friend.token, ["revision": 1, "title": "mine"])
        _ = eventually(within: 10, every: 0.05) {
            (try? owner.query("SELECT count(*) FROM ferry.refused_requests").rows[0][0]) == "1"
        }
        return (story, try Browser())
    }

    static func id(_ owner: PostgresConnection, _ name: String) throws -> String {
        try owner.query("SELECT id::text FROM ferry.user_by_name($1)", [name]).rows[0][0] ?? ""
    }
}
