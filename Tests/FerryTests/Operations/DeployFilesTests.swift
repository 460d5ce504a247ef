import Foundation
import FerryTestSupport
import Testing

/// The files in deploy/ that no Docker engine runs here: checked with the real
/// tools where they exist on the machine (nginx -t), and for consistency with CI.
@Suite struct DeployFilesTests {
    let root = TestEnvironment.repositoryRoot

    private func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func dockerfileRunsTheScriptsCIRuns() throws {
        let dockerfile = try read("deploy/Dockerfile")
        let ci = try read(".ci/run")
        #expect(dockerfile.contains("RUN bash deploy/local.sh install build"))
        #expect(dockerfile.contains("RUN bash /tmp/local.sh install runtime"))
        #expect(dockerfile.contains("RUN bash deploy/build.sh /opt/ferry"))
        #expect(ci.contains("bash deploy/local.sh install\n"), "CI installs every package set, build and runtime included")
        #expect(ci.contains("bash deploy/build.sh "), "CI runs the image's build script")
        #expect(dockerfile.contains("FROM swift:"))
        #expect(dockerfile.contains("FROM debian:bookworm-slim"))
        #expect(dockerfile.contains("USER ferry"))
        #expect(dockerfile.contains("HEALTHCHECK") && dockerfile.contains("/readyz"))
        let local = try read("deploy/local.sh")
        #expect(local.contains("runtime) apt_install $(missing_packages libpq5 libmemcached11) ;;"),
                "the runtime image installs only libpq5 and libmemcached11")
    }

    @Test func scriptsAreValidBash() throws {
        for script in ["deploy/local.sh", "deploy/build.sh", "deploy/healthcheck.sh", "deploy/test.sh",
                       "deploy/compose/roles.sh", ".ci/run"] {
            let result = try Subprocess.run(["bash", "-n", root.appendingPathComponent(script).path])
            #expect(result.status == 0, "\(script): \(result.output)")
        }
    }

    @Test func composeMigratesBeforeServing() throws {
        let compose = try read("deploy/docker-compose.yml")
        #expect(compose.contains("command: [\"migrate\"]"))
        #expect(compose.contains("condition: service_completed_successfully"))
        for service in ["postgres:", "memcached:", "migrate:", "ferry:"] { #expect(compose.contains("\n  \(service)")) }
    }

    @Test func healthcheckProbeAnswersLikeDockerExpects() throws {
        let server = try TestServer()
        defer { server.stop() }
        let probe = root.appendingPathComponent("deploy/healthcheck.sh").path
        let port = String(server.port)
        #expect(try Subprocess.run(["bash", probe, port, "/healthz"]).status == 0)
        let missing = try Subprocess.run(["bash", probe, port, "/no-such-route"])
        #expect(missing.status == 1)
        #expect(missing.output.contains("404"))
        #expect(try Subprocess.run(["bash", probe, String(FreePort.next()), "/healthz"]).status == 1)
    }

    @Test func nginxConfigurationPassesNginxT() throws {
        let directory = try Subprocess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let openssl = try Subprocess.run([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-keyout", key, "-out", cert,
        ])
        try #require(openssl.status == 0, "openssl: \(openssl.output)")
        let site = try read("deploy/nginx/ferry.conf")
            .replacingOccurrences(of: "/etc/ssl/ferry/fullchain.pem", with: cert)
            .replacingOccurrences(of: "/etc/ssl/ferry/privkey.pem", with: key)
        try site.write(to: directory.appendingPathComponent("ferry.conf"), atomically: true, encoding: .utf8)
        let main = """
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/error.log;
            events {}
            http { include \(directory.path)/ferry.conf; }
            """
        let mainPath = directory.appendingPathComponent("nginx.conf").path
        try main.write(toFile: mainPath, atomically: true, encoding: .utf8)
        let result = try Subprocess.run(["nginx", "-t", "-q", "-e", "\(directory.path)/error.log", "-c", mainPath])
        #expect(result.status == 0, "nginx -t rejected deploy/nginx/ferry.conf (is nginx installed? deploy/local.sh install):\n\(result.output)")
    }
}
