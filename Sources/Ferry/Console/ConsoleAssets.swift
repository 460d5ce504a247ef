import Crypto
import FerryHTTP

/// The console's pages: static HTML, CSS and JavaScript built into the binary
/// (``ConsoleAssetFiles``), served at `/console/` with the headers that keep a
/// browser strict about them.
///
/// - ``ConsoleSecurityHeaders``: the strict policy the pages rely on.
/// - `ETag` (a hash of the bytes) with `Cache-Control: no-cache`: the browser
///   revalidates, and a new binary's pages are never served stale.
struct ConsoleAssets: Sendable {
    struct Asset: Sendable {
        let bytes: [UInt8]
        let contentType: String
        let etag: String
    }

    let assets: [String: Asset]

    init(files: [(name: String, bytes: [UInt8])] = ConsoleAssetFiles.files) {
        var assets: [String: Asset] = [:]
        for (name, bytes) in files {
            let digest = SHA256.hash(data: bytes).prefix(12).map { String($0, radix: 16).leftPadded(2) }.joined()
            assets[name] = Asset(bytes: bytes, contentType: Self.contentType(name), etag: "\"\(digest)\"")
        }
        self.assets = assets
    }

    func register(on router: inout Router) {
        let assets = self
        // The router takes `/console` and `/console/` for one path; the page's relative
        // links need the slash, so the first is sent to the second.
        router.get(ConsoleRoutes.prefix + "/") { request, _ in
            guard request.path.hasSuffix("/") else {
                return HTTPResponse(status: 308, headers: HTTPHeaders(ConsoleSecurityHeaders.all + [("Location", ConsoleRoutes.prefix + "/")]))
            }
            return assets.answer("index.html", request)
        }
        router.get(ConsoleRoutes.prefix + "/:file") { request, context in assets.answer(context.parameters["file"] ?? "", request) }
    }

    func answer(_ name: String, _ request: HTTPRequest) -> HTTPResponse {
        guard let asset = assets[name] else {
            var response = Problem.notFound("no such console file").response
            for (field, value) in ConsoleSecurityHeaders.all { response.headers.add(field, value) }
            return response
        }
        var headers = HTTPHeaders(ConsoleSecurityHeaders.all)
        headers.add("ETag", asset.etag)
        headers.add("Cache-Control", "no-cache")
        if ReadConditions(request).notModified(etag: asset.etag, lastModifiedMs: nil) {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.add("Content-Type", asset.contentType)
        return HTTPResponse(status: 200, headers: headers, bytes: asset.bytes)
    }

    static func contentType(_ name: String) -> String {
        switch name.split(separator: ".").last ?? "" {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        default: "application/octet-stream"
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
