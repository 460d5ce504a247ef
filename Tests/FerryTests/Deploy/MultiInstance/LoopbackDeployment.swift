import Foundation
import FerryTestSupport
import Glibc

/// Ferry deployed the way deploy/README.md describes, on loopback: nginx
/// (deploy/nginx/ferry.conf, TLS and all) in front of several `ferry serve`
/// processes, which share two memcached servers and reach PostgreSQL only
/// through PgBouncer in transaction pooling mode.
final class LoopbackDeployment {
    let directory: URL
    let database: ScratchDatabase
    private(set) var memcached: [ServiceProcess] = []
    private(set) var pgbouncer: ServiceProcess?
    private(set) var ferries: [ServiceProcess] = []
    private(set) var nginx: ServiceProcess?
    /// Each instance's own port, for scraping it directly.
    private(set) var ferryPorts: [Int] = []
    /// nginx: plain HTTP (for the raw-socket test client), TLS, and the port-80 redirect.
    let nginxPort = FreePort.next(), nginxTLSPort = FreePort.next(), redirectPort = FreePort.next()
    let pgbouncerPort = FreePort.next()
    /// PgBouncer's server connections; fewer than the instances' pools together,
    /// which works only because each request is one transaction.
    let serverConnections = 2

    /// Settings every `ferry serve` gets besides the deployment's own (`FERRY_...` variables).
    let settings: [String: String]

    /// `appFiles`: the app's migrations, instead of the study example's.
    init(instances: Int = 2, appFiles: [String: String]? = nil, settings: [String: String] = [:]) throws {
        self.settings = settings
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-multi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // PgBouncer and nginx workers drop root; they must read their files and write temp files.
        chmod(directory.path, 0o777)
        if let appFiles {
            let scratch = try ScratchDatabase.create(prefix: "ferry_ops")
            do {
                try scratch.applyMigrations(appFiles: appFiles)
            } catch {
                scratch.drop()
                throw error
            }
            database = scratch
        } else {
            database = try ScratchDatabase(prefix: "ferry_ops")
        }
        do {
            try startMemcached(count: 2)
            try startPgBouncer()
            for _ in 0..<instances { try startFerry() }
            try startNginx()
        } catch {
            stop()
            throw error
        }
    }

    /// Stops everything, drops the database and removes the directory.
    func stop() {
        nginx?.stop()
        for ferry in ferries { ferry.stop() }
        // Nothing of theirs needs to survive, and neither hurries on SIGTERM.
        pgbouncer?.stop(signal: SIGKILL)
        for server in memcached { server.stop(signal: SIGKILL) }
        database.drop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func write(_ text: String, _ name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        chmod(url.path, 0o644)
        return url.path
    }

    private var asNobody: [String] { geteuid() == 0 ? ["-u", "nobody"] : [] }

    private func startMemcached(count: Int) throws {
        for index in 0..<count {
            let port = FreePort.next()
            memcached.append(
                try ServiceProcess(
                    "memcached-\(index)", executable: "memcached",
                    ["-l", "127.0.0.1", "-p", String(port), "-U", "0", "-m", "64"] + asNobody, port: port, directory: directory))
            memcachedAddresses.append("127.0.0.1:\(port)")
        }
    }

    private(set) var memcachedAddresses: [String] = []

    private func startPgBouncer() throws {
        let app = try URLComponents(string: TestEnvironment.appURL())
        let owner = try URLComponents(string: TestEnvironment.ownerURL())
        guard let user = app?.user, let password = app?.password, let host = owner?.host, let port = owner?.port else {
            throw ServiceProcess.Failure(description: "FERRY_TEST_APP_URL needs a user and password, FERRY_TEST_OWNER_URL a host and port")
        }
        let userlist = try write("\"\(user)\" \"\(password)\"\n", "userlist.txt")
        let ini = try write(
            """
            [databases]
            \(database.name) = host=\(host) port=\(port) dbname=\(database.name)

            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(pgbouncerPort)
            unix_socket_dir =
            auth_type = scram-sha-256
            auth_file = \(userlist)
            pool_mode = transaction
            default_pool_size = \(serverConnections)
            min_pool_size = 0
            reserve_pool_size = 0
            max_client_conn = 200
            server_reset_query =
            """, "pgbouncer.ini")
        pgbouncer = try ServiceProcess("pgbouncer", executable: "pgbouncer", asNobody + [ini], port: pgbouncerPort, directory: directory)
        appURLThroughPgBouncer = "postgresql://\(user):\(password)@127.0.0.1:\(pgbouncerPort)/\(database.name)"
    }

    private(set) var appURLThroughPgBouncer = ""

    /// Starts one more `ferry serve`; returns its index.
    @discardableResult
    func startFerry() throws -> Int {
        let port = FreePort.next()
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
        environment.merge([
            "FERRY_LISTEN_HOST": "127.0.0.1",
            "FERRY_LISTEN_PORT": String(port),
            "FERRY_LISTEN_IO_THREADS": "1",
            "FERRY_LISTEN_WORKER_THREADS": "8",
            "FERRY_DATABASE_URL": appURLThroughPgBouncer,
            // The one LISTEN connection needs a session of its own: PostgreSQL itself, not PgBouncer.
            "FERRY_LIVE_LISTEN_URL": database.appURL,
            "FERRY_DATABASE_MIGRATION_URL": database.ownerURL,
            "FERRY_DATABASE_POOL_SIZE": "4",
            // deploy/README.md: behind PgBouncer, no session-level SET and no named prepared statements.
            "FERRY_DATABASE_STATEMENT_TIMEOUT_MS": "0",
            "FERRY_DATABASE_PREPARED_STATEMENTS": "false",
            "FERRY_MEMCACHED_SERVERS": memcachedAddresses.joined(separator: ","),
            "FERRY_LOGGING_LEVEL": "warning",
        ]) { $1 }
        environment.merge(settings) { $1 }
        let index = ferries.count
        ferries.append(
            try ServiceProcess(
                "ferry-\(index)", executable: try FerryProcess.binary.path, ["serve"],
                environment: environment, port: port, directory: directory))
        ferryPorts.append(port)
        return index
    }

    private func startNginx() throws {
        let root = TestEnvironment.repositoryRoot
        var site = try String(contentsOf: root.appendingPathComponent("deploy/nginx/ferry.conf"), encoding: .utf8)
        let upstreams = ferryPorts.map { "    server 127.0.0.1:\($0) max_fails=3 fail_timeout=10s;" }.joined(separator: "\n")
        site = site.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("server 10.0.0.") && !$0.contains("listen [::]") }
            .joined(separator: "\n")
            .replacingOccurrences(of: "upstream ferry {", with: "upstream ferry {\n" + upstreams)
            .replacingOccurrences(of: "listen 80;", with: "listen 127.0.0.1:\(redirectPort);")
            .replacingOccurrences(
                of: "listen 443 ssl http2;",
                with: "listen 127.0.0.1:\(nginxTLSPort) ssl http2;\n    listen 127.0.0.1:\(nginxPort);")
        let cert = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        let openssl = try Subprocess.run([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-keyout", key, "-out", cert,
        ])
        guard openssl.status == 0 else { throw ServiceProcess.Failure(description: "openssl: \(openssl.output)") }
        chmod(key, 0o644)
        site = site.replacingOccurrences(of: "/etc/ssl/ferry/fullchain.pem", with: cert)
            .replacingOccurrences(of: "/etc/ssl/ferry/privkey.pem", with: key)
            .replacingOccurrences(of: "/var/lib/nginx/ferry-cache", with: directory.appendingPathComponent("nginx-cache").path)
        let sitePath = try write(site, "ferry.conf")
        let temp = directory.appendingPathComponent("nginx-tmp").path
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: true)
        chmod(temp, 0o777)
        let main = try write(
            """
            daemon off;
            worker_processes 2;
            pid \(directory.path)/nginx.pid;
            error_log stderr warn;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(temp)/body;
                proxy_temp_path \(temp)/proxy;
                fastcgi_temp_path \(temp)/fastcgi;
                uwsgi_temp_path \(temp)/uwsgi;
                scgi_temp_path \(temp)/scgi;
                include \(sitePath);
            }
            """, "nginx.conf")
        nginx = try ServiceProcess("nginx", executable: "nginx", ["-e", "stderr", "-c", main], port: nginxPort, directory: directory)
    }

    /// The tail of every process's log, for failure messages.
    var logs: String {
        (memcached + [pgbouncer].compactMap { $0 } + ferries + [nginx].compactMap { $0 }).map { process in
            let text = (try? String(contentsOf: process.log, encoding: .utf8)) ?? ""
            return "--- \(process.name)\n" + text.suffix(2000)
        }.joined(separator: "\n")
    }
}
