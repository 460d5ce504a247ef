import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Headless Chromium (Debian's `chromium`), driven over the DevTools protocol
/// on a pipe (`--remote-debugging-pipe`: Chromium reads commands on fd 3 and
/// writes answers and events on fd 4, each a JSON message ended by a NUL), so
/// no WebSocket and no port is needed. One page (a target with its session)
/// per instance; everything is synchronous, on the test's thread.
final class Chromium {
    private let pid: pid_t
    private let commands: Int32
    private let answers: Int32
    private var buffer: [UInt8] = []
    private var nextID = 1
    private let profile: String
    /// The page's session.
    private var session = ""
    /// Events received so far, in order (method and params).
    private(set) var events: [(method: String, params: [String: Any])] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The Chromium binary, or nil when it is not installed (`deploy/local.sh install` installs it).
    static var binary: String? {
        ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts Chromium and opens one blank page of `width` by `height` CSS pixels.
    init(width: Int = 1280, height: Int = 900) throws {
        guard let binary = Self.binary else { throw Failure("chromium is not installed: run deploy/local.sh install") }
        profile = NSTemporaryDirectory() + "ferry-chromium-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw Failure("pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 3)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 4)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, profile + "/stdout.log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, profile + "/stderr.log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let arguments = [
            binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--disable-component-update", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
            "--user-data-dir=\(profile)", "--window-size=\(width),\(height)", "about:blank",
        ]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, binary, &actions, nil, &argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else { throw Failure("cannot start \(binary): \(String(cString: strerror(spawned)))") }
        self.pid = pid
        commands = toChild[1]
        answers = fromChild[0]
        let target = try call("Target.createTarget", ["url": "about:blank"], inSession: false)
        guard let targetID = target["targetId"] as? String else { throw Failure("no target: \(target)") }
        let attached = try call("Target.attachToTarget", ["targetId": targetID, "flatten": true], inSession: false)
        guard let session = attached["sessionId"] as? String else { throw Failure("not attached: \(attached)") }
        self.session = session
        for domain in ["Page.enable", "Runtime.enable", "Log.enable"] { _ = try call(domain) }
        _ = try call(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": false])
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(commands)
        close(answers)
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// Sends a command and waits (up to `timeout` seconds) for its answer; events on the way are kept.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:], inSession: Bool = true, timeout: Double = 30) throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": params]
        if inSession { message["sessionId"] = session }
        var bytes = Array(try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { write(commands, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure("writing to chromium failed") }
            written += n
        }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let message = try nextMessage(until: deadline, waitingFor: method)
            if message["id"] as? Int == id {
                if let error = message["error"] as? [String: Any] { throw Failure("\(method): \(error)") }
                return message["result"] as? [String: Any] ?? [:]
            }
            if let event = message["method"] as? String { events.append((event, message["params"] as? [String: Any] ?? [:])) }
        }
    }

    private func nextMessage(until deadline: Date, waitingFor method: String) throws -> [String: Any] {
        while true {
            if let end = buffer.firstIndex(of: 0) {
                let data = Data(buffer[..<end])
                buffer.removeSubrange(...end)
                return (try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Failure("no answer to \(method) in time") }
            var poller = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1) * 1000)) >= 0 else { throw Failure("poll failed") }
            guard poller.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { read(answers, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure("chromium closed its pipe (waiting for \(method))") }
            buffer += chunk[..<n]
        }
    }

    /// Opens `url` and waits until its document has loaded.
    func open(_ url: String) throws {
        _ = try call("Page.navigate", ["url": url])
        try waitFor("document.readyState === 'complete'", "the page to load")
    }

    /// The value of a JavaScript expression (awaited when it is a promise), as JSON turns it into Swift.
    @discardableResult
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] as? [String: Any] {
            throw Failure("\(expression.prefix(80)): \((exception["exception"] as? [String: Any])?["description"] ?? exception)")
        }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Waits until `expression` is true (up to `timeout` seconds), checking every 50 ms.
    func waitFor(_ expression: String, _ what: String, timeout: Double = 20) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? evaluate("Boolean(\(expression))")) as? Bool == true { return }
            usleep(50_000)
        }
        throw Failure(
            "timed out waiting for \(what) (\(expression)); page text: \((try? text("body"))?.prefix(600) ?? ""); "
                + "problems: \(problems)")
    }

    /// The text of the first element `selector` matches ("" when none).
    func text(_ selector: String) throws -> String {
        try evaluate("(document.querySelector(\(Self.quoted(selector))) || {}).innerText || ''") as? String ?? ""
    }

    /// Sets an input's value as typing would (the `input` event fires).
    func type(_ selector: String, _ value: String) throws {
        try evaluate(
            """
            (() => { const e = document.querySelector(\(Self.quoted(selector))); e.focus(); e.value = \(Self.quoted(value));
                     e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()
            """)
    }

    /// Clicks the first element `selector` matches.
    func click(_ selector: String) throws {
        try waitFor("document.querySelector(\(Self.quoted(selector)))", "an element \(selector)")
        try evaluate("document.querySelector(\(Self.quoted(selector))).click()")
    }

    /// Saves a PNG of the page under `directory` as `name`.png; returns its path.
    @discardableResult
    func screenshot(_ name: String, in directory: URL) throws -> String {
        let result = try call("Page.captureScreenshot", ["format": "png", "captureBeyondViewport": false])
        guard let base64 = result["data"] as? String, let data = Data(base64Encoded: base64) else { throw Failure("no screenshot") }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(name + ".png")
        try data.write(to: file)
        return file.path
    }

    /// Messages the page logged: console calls, uncaught exceptions, and the
    /// browser's own entries (a Content-Security-Policy violation is one).
    var problems: [String] {
        events.compactMap { event in
            switch event.method {
            case "Runtime.exceptionThrown":
                return "exception: \((event.params["exceptionDetails"] as? [String: Any])?["text"] ?? "")"
            case "Log.entryAdded":
                let entry = event.params["entry"] as? [String: Any] ?? [:]
                let text = "\(entry["text"] ?? "")"
                // A refused sign-in is the page's business, not a problem of the page.
                if text.contains("Failed to load resource") && text.contains("status of 401") { return nil }
                return "\(entry["level"] ?? ""): \(text)"
            case "Runtime.consoleAPICalled" where ["error", "warning"].contains(event.params["type"] as? String ?? ""):
                return "console: \(event.params["args"] ?? "")"
            default:
                return nil
            }
        }
    }

    /// Whether a JavaScript dialog (alert, confirm, prompt) ever opened.
    var dialogOpened: Bool { events.contains { $0.method == "Page.javascriptDialogOpening" } }

    /// `text` as a JavaScript string literal.
    static func quoted(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
    }
}
