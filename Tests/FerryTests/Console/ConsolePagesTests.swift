import Ferry
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

/// The console's pages and their headers over HTTP (the browser tests drive
/// the same pages in Chromium).
@Suite struct ConsolePagesTests {
    @Test func pagesAreServedUnderAStrictPolicy() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let client = fixture.server.client()
        let redirect = try client.request("GET", "/console")
        #expect(redirect.status == 308 && redirect.header("Location") == "/console/")
        let page = try client.request("GET", "/console/")
        #expect(page.status == 200 && page.header("Content-Type") == "text/html; charset=utf-8")
        let policy = try #require(page.header("Content-Security-Policy"))
        for directive in [
            "default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'",
            "require-trusted-types-for 'script'", "trusted-types 'none'", "base-uri 'none'",
        ] {
            #expect(policy.contains(directive), "\(directive)")
        }
        #expect(!policy.contains("unsafe"))
        #expect(page.header("X-Frame-Options") == "DENY" && page.header("X-Content-Type-Options") == "nosniff")
        // The API's answers carry the same policy and are never cached.
        let api = try fixture.console("GET", "/session")
        #expect(api.header("Content-Security-Policy") == policy && api.header("Cache-Control") == "no-store")
        // Revalidated by ETag.
        let etag = try #require(page.header("ETag"))
        #expect(try client.request("GET", "/console/", headers: [("If-None-Match", etag)]).status == 304)
        #expect(try client.request("GET", "/console/nope.js").status == 404)
        #expect(try client.request("GET", "/console/console.js").header("Content-Type") == "text/javascript; charset=utf-8")
    }

    /// No inline script or style, no handler attributes, no HTML sinks or
    /// eval in the scripts: everything a database value could ride into the
    /// page as code is absent from the files themselves.
    @Test func theFilesHaveNoInlineScriptAndNoHTMLSinks() throws {
        let fixture = try ConsoleFixture()
        defer { fixture.stop() }
        let client = fixture.server.client()
        let html = try client.request("GET", "/console/").text
        let scripts = html.components(separatedBy: "<script").dropFirst()
        #expect(!scripts.isEmpty)
        for script in scripts {
            let tag = script.prefix { $0 != ">" }
            #expect(tag.contains("src="), "an inline script: <script\(tag)>")
            #expect(script.dropFirst(tag.count + 1).hasPrefix("</script>"))
        }
        #expect(!html.contains("<style") && !html.contains(" style=") && html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil)
        let names = try #require(html.range(of: "console.js")).isEmpty == false
        #expect(names)
        for file in [
            "console.js", "client.js", "dom.js", "charts.js", "view-resources.js", "view-rows.js", "view-user.js",
            "view-health.js", "view-audit.js",
        ] {
            let source = try client.request("GET", "/console/\(file)")
            #expect(source.status == 200, "\(file)")
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "setAttribute('style'"] {
                #expect(!source.text.contains(sink), "\(file) uses \(sink)")
            }
        }
    }
}
