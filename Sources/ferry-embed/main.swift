#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// ferry-embed OUTPUT NAME ACCESS LABEL DIRECTORY FILE...
//
// The EmbedFiles build plugin's tool (Sources/EmbedFiles): writes OUTPUT, a Swift file
// declaring `ACCESS enum NAME` whose `files` holds each FILE (a path relative to
// DIRECTORY) with its bytes. LABEL (the directory as the package names it) only goes
// into the header, so the output does not depend on where the package was checked out.
// OUTPUT is left untouched when its contents would not change, so nothing recompiles.
//
// The C library only, no Foundation: the tool is built for the host in every build,
// the fuzzer's and the static release's too, with their flags (deploy/build.sh names
// Foundation's static archives to every link), and it needs nothing from them.

/// Writes `message` to standard error and exits with `status`.
func fail(_ message: String, status: Int32 = 1) -> Never {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

/// The whole file at `path`, or nil when it cannot be read.
func contents(of path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        bytes += chunk[0..<count]
        if count < chunk.count { return ferror(file) == 0 ? bytes : nil }
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 6 else { fail("usage: ferry-embed OUTPUT NAME ACCESS LABEL DIRECTORY FILE...", status: 64) }
let (output, name, access, label, directory) = (arguments[1], arguments[2], arguments[3], arguments[4], arguments[5])
var files: [(name: String, bytes: [UInt8])] = []
for file in arguments.dropFirst(6) {
    guard let bytes = contents(of: directory + "/" + file) else { fail("ferry-embed: cannot read \(directory)/\(file)") }
    files.append((file, bytes))
}
let source = Array(EmbeddedSource.swift(name: name, access: access, label: label, files: files).utf8)
if contents(of: output) != source {
    guard let file = fopen(output, "wb") else { fail("ferry-embed: cannot write \(output)") }
    let written = fwrite(source, 1, source.count, file)
    guard fclose(file) == 0, written == source.count else { fail("ferry-embed: cannot write \(output)") }
}
