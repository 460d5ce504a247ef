import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Testing

extension Resources {
    /// gzip both ways over a real Ferry: answers, their ETags and 304s, and request bodies.
    @Suite struct CompressionTests {
        /// A user with a set of 100 terms, the size of one default Index page.
        private func hundredTerms() throws -> (API, String) {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let terms = (0..<100).map { ["set_id": set.id, "word": "word \($0)", "definition": "what word \($0) means", "rank": "U"] }
            let created = try me.call("POST", "/v1/terms", json: terms)
            #expect(created.status == 201, "\(created.text)")
            return (me, "/v1/terms?set_id=\(set.id)")
        }

        @Test func anIndexPageDecodesToTheIdentityAnswer() throws {
            let (me, path) = try hundredTerms()
            let identity = try me.call("GET", path)
            #expect(identity.status == 200)
            #expect(identity.header("Vary")?.contains("Accept-Encoding") == true)
            let gzip = try me.call("GET", path, headers: [("Accept-Encoding", "gzip")])
            #expect(gzip.status == 200)
            #expect(gzip.header("Content-Encoding") == "gzip")
            #expect(gzip.body.count * 4 < identity.body.count, "\(gzip.body.count) of \(identity.body.count) bytes")
            #expect(try ZlibCodec.decode(gzip.body) == identity.body)
            #expect((identity.object["data"] as? [Any])?.count == 100)
        }

        @Test func theIndexETagDiffersPerEncodingAnd304HoldsAcrossBoth() throws {
            let (me, path) = try hundredTerms()
            let plainTag = try #require(try me.call("GET", path).header("ETag"))
            let gzipTag = try #require(try me.call("GET", path, headers: [("Accept-Encoding", "gzip")]).header("ETag"))
            #expect(gzipTag == String(plainTag.dropLast()) + "-gzip\"")
            for (tag, accept) in [(plainTag, "gzip"), (gzipTag, "identity"), (gzipTag, "gzip"), (plainTag, "identity")] {
                let response = try me.call("GET", path, headers: [("Accept-Encoding", accept), ("If-None-Match", tag)])
                #expect(response.status == 304, "If-None-Match: \(tag), Accept-Encoding: \(accept)")
                #expect(response.body.isEmpty)
                #expect(response.header("ETag") == tag)
                #expect(response.header("Vary")?.contains("Accept-Encoding") == true)
            }
            let head = try me.call("HEAD", path, headers: [("Accept-Encoding", "gzip")])
            #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Encoding") == "gzip")
        }

        @Test func theChangesFeedAndProblemsAreCompressed() throws {
            let (me, _) = try hundredTerms()
            // The feed serves a write once every transaction older than it has
            // ended, cluster-wide, and other suites share the cluster: until then
            // the page is short (under compression.min_bytes, so not compressed).
            var feed = try me.call("GET", "/v1/changes?limit=1000", headers: [("Accept-Encoding", "gzip")])
            _ = try eventually(within: 60, every: 0.1) {
                feed = try me.call("GET", "/v1/changes?limit=1000", headers: [("Accept-Encoding", "gzip")])
                return feed.header("Content-Encoding") != nil
            }
            #expect(feed.status == 200)
            #expect(feed.header("Content-Encoding") == "gzip")
            let decoded = try JSONSerialization.jsonObject(with: Data(ZlibCodec.decode(feed.body))) as? [String: Any]
            #expect(decoded?["cursor"] is String)
            // A bulk create of 100 invalid rows answers a long problem+json.
            let invalid = (0..<100).map { _ in ["word": "no set"] }
            let problem = try me.call("POST", "/v1/terms", json: invalid, headers: [("Accept-Encoding", "gzip")])
            #expect(problem.status == 422)
            #expect(problem.header("Content-Encoding") == "gzip")
            let body = try JSONSerialization.jsonObject(with: Data(ZlibCodec.decode(problem.body))) as? [String: Any]
            #expect((body?["errors"] as? [Any])?.isEmpty == false)
        }

        @Test func gzipRequestBodiesAreAcceptedAndRefusedWithinLimits() throws {
            let me = try ResourceFixture.user()
            let set = try me.createSet()
            let terms = (0..<50).map { ["set_id": set.id, "word": "w\($0)", "definition": "d", "rank": "U"] }
            let plain = Array(try JSONSerialization.data(withJSONObject: terms))
            let created = try me.call("POST", "/v1/terms", body: ZlibCodec.encode(plain), headers: [("Content-Encoding", "gzip")])
            #expect(created.status == 201, "\(created.text)")
            #expect(created.array.count == 50)
            // A PATCH in gzip, with the If-Match of a compressed read.
            let id = created.array[0].id
            let patch = Array(#"{"definition":"gzipped"}"#.utf8)
            let patched = try me.call(
                "PATCH", "/v1/terms/\(id)", body: ZlibCodec.encode(patch),
                headers: [("Content-Encoding", "gzip"), ("If-Match", "\"1-gzip\"")])
            #expect(patched.status == 200, "\(patched.text)")
            #expect(patched.object["definition"] as? String == "gzipped")

            // 64 MiB of zeros in 64 KiB of gzip, against the default 10 MiB limit.
            let bomb = try me.call("POST", "/v1/terms", body: ZlibCodec.zeros(count: 64 << 20), headers: [("Content-Encoding", "gzip")])
            #expect(bomb.status == 413)
            #expect(bomb.code == "payload_too_large")
            let corrupt = try me.call("POST", "/v1/terms", body: Array("{\"word\":1}".utf8), headers: [("Content-Encoding", "gzip")])
            #expect(corrupt.status == 400)
            #expect(corrupt.header("Content-Type") == "application/problem+json")
            #expect(corrupt.code == "bad_request")
            let brotli = try me.call("POST", "/v1/terms", body: plain, headers: [("Content-Encoding", "br")])
            #expect(brotli.status == 415)
            #expect(brotli.code == "unsupported_content_encoding")
        }

        /// The issue's "done when": curl --compressed gets gzip from a JSON endpoint.
        @Test func curlCompressedReceivesGzip() throws {
            let (me, path) = try hundredTerms()
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = [
                "-sS", "--compressed", "-D", "-", "-o", "/dev/null",
                "-H", "Authorization: Bearer \(me.token)", "http://127.0.0.1:\(me.server.port)\(path)",
            ]
            let output = Pipe()
            curl.standardOutput = output
            try curl.run()
            let head = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            curl.waitUntilExit()
            #expect(curl.terminationStatus == 0)
            #expect(head.lowercased().contains("content-encoding: gzip"), "\(head)")
        }
    }
}
