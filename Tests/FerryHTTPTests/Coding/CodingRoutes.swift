import Foundation
import FerryHTTP

/// Routes for the content-coding wire tests: JSON of several sizes with an entity tag
/// the handler compares plainly, as an application does, and a streamed JSON body.
enum CodingRoutes {
    /// About 6 KiB of JSON, the same every time.
    static let document: [UInt8] = {
        let rows = (0..<100).map { #"{"id":\#($0),"word":"word \#($0)","definition":"what word \#($0) means"}"# }
        return Array(("[" + rows.joined(separator: ",") + "]").utf8)
    }()

    static func router() -> Router {
        var router = Router()
        router.get("/json") { request, _ in
            // The handler sees the tag without any coding suffix, whichever encoding the client holds.
            let tags = (request.headers["If-None-Match"] ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "W/", with: "")
            }
            if tags.contains(#""v1""#) {
                return HTTPResponse(status: 304, headers: HTTPHeaders([("ETag", #""v1""#)]))
            }
            return .json(document, headers: HTTPHeaders([("ETag", #""v1""#)]))
        }
        router.patch("/json") { request, _ in
            request.headers["If-Match"] == #""v1""#
                ? .json(Array(#"{"ok":true}"#.utf8))
                : .problem(status: 412, extensions: [("code", "precondition_failed")])
        }
        router.get("/problem") { _, _ in
            .problem(status: 422, detail: String(repeating: "long detail ", count: 200), extensions: [("code", "validation_failed")])
        }
        router.get("/small") { _, _ in .json(Array(#"{"status":"ok"}"#.utf8)) }
        router.get("/text") { _, _ in .text(String(repeating: "plain text ", count: 1000)) }
        router.get("/stream") { _, _ in
            HTTPResponse(
                headers: HTTPHeaders([("Content-Type", "application/json")]),
                body: .stream { writer in
                    try writer.write("[")
                    for i in 0..<2000 {
                        try writer.write((i > 0 ? "," : "") + #"{"n":\#(i)}"#)
                        // A flush mid-body must still leave a decodable stream.
                        if i == 1000 { try writer.flush() }
                    }
                    try writer.write("]")
                })
        }
        router.post("/echo") { request, _ in
            HTTPResponse(
                status: 200,
                headers: HTTPHeaders([
                    ("Content-Type", "application/octet-stream"),
                    ("X-Content-Length", request.headers["Content-Length"] ?? "-"),
                    ("X-Content-Encoding", request.headers["Content-Encoding"] ?? "-"),
                ]), bytes: request.body)
        }
        return router
    }
}
