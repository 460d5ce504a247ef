import Foundation
import FerryTestSupport
import FerryMigrations
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
        #expect(
            local.contains("runtime) apt_install $(missing_packages libpq5 libmemcached11 libmemcachedutil2 zlib1g libcurl4 ca-certificates) ;;"),
            "the runtime image installs only the C libraries Ferry links, and the CA roots libcurl verifies a JWKS URL's TLS with")
    }

    /// A test that needs a tool skips without it, so CI must install every one:
    /// a tool missing there would make its test pass by not running.
    @Test func installBringsEveryToolTheTestsRun() throws {
        let local = try read("deploy/local.sh")
        let ci = try read(".ci/run")
        for (tool, package) in [("systemd-analyze", "systemd"), ("nginx", "nginx-light"), ("pgbouncer", "pgbouncer"), ("tmux", "tmux")] {
            #expect(local.contains("command -v \(tool) >/dev/null || need+=(\(package))"), "deploy/local.sh install does not install \(tool)")
            #expect(ci.contains(tool), ".ci/run's header does not name \(tool) among the test tools")
        }
    }

    @Test func scriptsAreValidBash() throws {
        for script in [
            "deploy/local.sh", "deploy/build.sh", "deploy/healthcheck.sh", "deploy/test.sh",
            "deploy/compose/roles.sh", ".ci/run",
        ] {
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
            .replacingOccurrences(of: "/var/lib/nginx/ferry-cache", with: directory.appendingPathComponent("cache").path)
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

    @Test func runtimePackagesCoverEveryLibraryTheBinaryLinks() throws {
        // The image installs `deploy/local.sh install runtime` on bookworm-slim, whose base
        // already has libc6, libstdc++6 and libgcc-s1; the Swift runtime is linked statically there.
        let runtime = ["libpq5", "libmemcached11", "libmemcachedutil2", "zlib1g", "libcurl4"]
        var allowed: Set<String> = Set(runtime + ["libc6", "libstdc++6", "libgcc-s1"])
        // What apt pulls in with them is there too (libsasl2-2 comes with libmemcached11).
        let depends = try Subprocess.run(["apt-cache", "depends", "--no-recommends", "--no-suggests"] + runtime)
        for line in depends.output.split(separator: "\n") where line.contains("Depends: ") {
            allowed.insert(String(line.split(separator: " ").last ?? "").replacingOccurrences(of: ":amd64", with: ""))
        }
        let binary = try FerryProcess.binary.path
        let elf = try Subprocess.run(["readelf", "-d", binary])
        try #require(elf.status == 0, "readelf: \(elf.output)")
        let needed = elf.output.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]") else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        #expect(needed.contains { $0.hasPrefix("libpq.so") })
        let swiftRuntime = ["libswift", "libFoundation", "lib_Foundation", "libdispatch", "libBlocksRuntime"]
        let external = needed.filter { library in !swiftRuntime.contains { library.hasPrefix($0) } }
        // The files the allowed packages ship, from dpkg's own lists (a reverse `dpkg -S`
        // search would read every package's list, which is slow on a busy machine).
        var shipped: [String: String] = [:]
        for package in allowed {
            for name in [package, package + ":amd64", package + ":arm64"] {
                guard let list = try? String(contentsOfFile: "/var/lib/dpkg/info/\(name).list", encoding: .utf8) else { continue }
                for path in list.split(separator: "\n") { shipped[String(path.split(separator: "/").last ?? "")] = package }
            }
        }
        for library in external {
            #expect(shipped[library] != nil, "\(library) comes from no package the runtime image installs (\(runtime))")
        }
    }
}
