@testable import Ferry
import FerryBase
import FerryHTTP
import FerryHTTPTestSupport
import FerryTestSupport
import Foundation
import Logging
import Testing

/// ``JWKSFetch`` on libcurl's easy interface (issue 51): one GET with
/// `Accept: application/json`, bounded in time and size, 200 or refused, no
/// redirect followed, http and https only, each refusal naming the URL.
@Suite struct JWKSFetchTests {
    static func failure(_ result: Result<String, KeyImportError>) -> String? {
        if case .failure(let error) = result { return error.reason }
        return nil
    }

    /// A provider over Ferry's own HTTP server answering `/jwks.json` with `respond`.
    static func provider(_ respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws -> (HTTPServer, URL) {
        var router = Router()
        router.get("/jwks.json") { request, _ in respond(request) }
        router.get("/moved.json") { _, _ in .json(Array(#"{"keys":[]}"#.utf8)) }
        let server = try TestHTTPServer.start(responder: router)
        return (server, URL(string: "http://127.0.0.1:\(server.port)/jwks.json")!)
    }

    @Test func readsA200BodyAskingForJSON() throws {
        let accept = Locked<String?>(nil)
        let (server, url) = try Self.provider { request in
            accept.withLock { $0 = request.headers["Accept"] }
            return .json(Array(#"{"keys":[]}"#.utf8))
        }
        defer { server.shutdown() }
        let result = JWKSFetch.text(url, timeout: .seconds(10))
        #expect((try? result.get()) == #"{"keys":[]}"#, "\(result)")
        #expect(accept.withLock { $0 } == "application/json")
    }

    @Test func aStatusOtherThan200IsRefusedNamingIt() throws {
        let (server, url) = try Self.provider { _ in .text("no such realm", status: 404) }
        defer { server.shutdown() }
        let reason = Self.failure(JWKSFetch.text(url, timeout: .seconds(10)))
        #expect(reason == "\(url.absoluteString) answered 404")
    }

    /// A credential in the URL (basic auth, an API key in the query) reaches the provider
    /// and is never written where a refusal is read: the log and the console.
    @Test func aRefusalLeavesTheURLsCredentialsOut() throws {
        let authorization = Locked<String?>(nil)
        let (server, url) = try Self.provider { request in
            authorization.withLock { $0 = request.headers["Authorization"] }
            return .text("down", status: 500)
        }
        defer { server.shutdown() }
        let secret = try #require(URL(string: "http://keys:S3CRET@127.0.0.1:\(url.port ?? 0)/jwks.json?api_key=QSECRET"))
        let reason = try #require(Self.failure(JWKSFetch.text(secret, timeout: .seconds(10))))
        #expect(reason == "http://127.0.0.1:\(url.port ?? 0)/jwks.json?… answered 500")
        #expect(!reason.contains("S3CRET") && !reason.contains("QSECRET") && !reason.contains("keys@"))
        #expect(authorization.withLock { $0 } == "Basic " + Data("keys:S3CRET".utf8).base64EncodedString())
    }

    /// A key the provider publishes and Ferry cannot use (a symmetric key from a URL, an
    /// algorithm it does not take) is named in the fetch's log line, with why.
    @Test func aFetchSaysWhichKeysItLeftOut() throws {
        let (server, url) = try Self.provider { _ in
            .json(Array(#"{"keys":[{"kty":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0","kid":"shared"},{"kty":"XYZ","kid":"odd"}]}"#.utf8))
        }
        defer { server.shutdown() }
        var provider = JWTProvider(issuer: "https://idp.example", audiences: ["ferry"])
        provider.jwksURL = url
        let events = RecordingLogHandler.Events()
        let logger = Logger(label: "t") { _ in RecordingLogHandler(events: events) }
        let keys = try ProviderKeys(
            provider: provider, timing: KeyTiming(refresh: .seconds(3600), grace: .seconds(60), minRefetch: .seconds(1)), logger: logger)
        _ = keys.fetchNow()
        let fetched = try #require(events.events.withLock { $0.first { $0.0 == "JWKS fetched" } })
        #expect(fetched.1["keys"]?.description == "0")
        let skipped = fetched.1["skipped"]?.description ?? ""
        #expect(skipped.contains("key 0: ") && skipped.contains("key 1: kty XYZ"), "\(skipped)")
    }

    /// A redirect is not followed: the operator configures where the keys are.
    @Test func aRedirectIsRefusedNotFollowed() throws {
        let fetched = Locked(0)
        let (server, url) = try Self.provider { _ in
            fetched.withLock { $0 += 1 }
            return HTTPResponse(status: 302, headers: HTTPHeaders([("Location", "/moved.json")]))
        }
        defer { server.shutdown() }
        let reason = Self.failure(JWKSFetch.text(url, timeout: .seconds(10)))
        #expect(reason == "\(url.absoluteString) answered 302")
        #expect(fetched.withLock { $0 } == 1)
    }

    /// Announced with Content-Length: refused before the body is read.
    @Test func aBodyOverMaxBytesIsRefused() throws {
        let (server, url) = try Self.provider { _ in .json([UInt8](repeating: UInt8(ascii: " "), count: JWKSFetch.maxBytes + 1)) }
        defer { server.shutdown() }
        let reason = Self.failure(JWKSFetch.text(url, timeout: .seconds(10)))
        #expect(reason == "\(url.absoluteString) sent no body, or one over \(JWKSFetch.maxBytes) bytes")
        // Exactly maxBytes is read.
        let (atMost, atMostURL) = try Self.provider { _ in .json([UInt8](repeating: UInt8(ascii: " "), count: JWKSFetch.maxBytes)) }
        defer { atMost.shutdown() }
        #expect((try? JWKSFetch.text(atMostURL, timeout: .seconds(10)).get())?.utf8.count == JWKSFetch.maxBytes)
    }

    /// Unannounced, read until the close: the transfer is abandoned past the bound.
    @Test func anUnannouncedBodyOverMaxBytesIsAbandoned() throws {
        let head = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n".utf8)
        let listener = try ScriptedListener(answer: head + [UInt8](repeating: UInt8(ascii: " "), count: 4 * JWKSFetch.maxBytes))
        defer { listener.stop() }
        let reason = Self.failure(JWKSFetch.text(listener.url, timeout: .seconds(10)))
        #expect(reason == "\(listener.url.absoluteString) sent no body, or one over \(JWKSFetch.maxBytes) bytes")
    }

    /// A provider that accepts the connection and never answers: the timeout
    /// bounds the whole. (Its CPU while waiting is measured in bench/auth/README.md.)
    @Test func aHangingProviderTimesOut() throws {
        let listener = try ScriptedListener(answer: nil)
        defer { listener.stop() }
        let start = ContinuousClock.now
        let reason = Self.failure(JWKSFetch.text(listener.url, timeout: .seconds(1)))
        let elapsed = ContinuousClock.now - start
        #expect(reason == "fetching \(listener.url.absoluteString) timed out")
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(2), "\(elapsed)")
    }

    @Test func aRefusedConnectionNamesTheURL() throws {
        let url = URL(string: "http://127.0.0.1:\(try freeLoopbackPort())/jwks.json")!
        let reason = Self.failure(JWKSFetch.text(url, timeout: .seconds(10))) ?? ""
        #expect(reason.hasPrefix("fetching \(url.absoluteString) failed: "), "\(reason)")
    }

    /// Only http and https: libcurl speaks many more protocols.
    @Test func otherSchemesAreRefused() throws {
        for text in ["file:///etc/hostname", "ftp://127.0.0.1/jwks.json", "gopher://127.0.0.1/1"] {
            let url = URL(string: text)!
            let reason = Self.failure(JWKSFetch.text(url, timeout: .seconds(10))) ?? ""
            #expect(reason.hasPrefix("fetching \(text) failed: "), "\(text): \(reason)")
        }
    }

    /// TLS peer verification is on: `openssl s_server` with a self-signed
    /// certificate answers any GET with 200 (`-www`), so with verification
    /// off this fetch would read a body.
    @Test func aSelfSignedCertificateIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jwks-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (key, certificate) = (directory.appendingPathComponent("key.pem").path, directory.appendingPathComponent("cert.pem").path)
        let request = Process()
        request.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        request.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", certificate,
        ]
        request.standardError = FileHandle.nullDevice
        try request.run()
        request.waitUntilExit()
        try #require(request.terminationStatus == 0, "openssl req")
        let port = try freeLoopbackPort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        server.arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-www", "-quiet"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            // SIGKILL: the test process's ignored SIGTERM is inherited.
            kill(server.processIdentifier, SIGKILL)
            server.waitUntilExit()
        }
        try waitUntil("openssl s_server listens on \(port)") { canConnect(port: port) }
        let url = URL(string: "https://127.0.0.1:\(port)/jwks.json")!
        let reason = Self.failure(JWKSFetch.text(url, timeout: .seconds(10))) ?? ""
        #expect(reason.hasPrefix("fetching \(url.absoluteString) failed: "), "\(reason)")
        #expect(reason.lowercased().contains("certificate"), "\(reason)")
    }
}
