import Foundation
import PackagePlugin

/// Builds files into a target as Swift constants, so that a binary carries them and
/// nothing has to be installed beside it: Ferry's own migrations in `ferry`, say.
///
/// The files belong to the target (they sit in its directory; SwiftPM hands files it
/// does not compile to the target's plugins), and so does one `NAME.embed` file per
/// constant. Its lines:
///
///     # a comment
///     directory .                the folder, relative to the .embed file (default: its own)
///     suffix .sql                only names ending so (repeatable; default: every file
///                                but Swift sources and .embed files)
///     access package             the constant's access level (default: internal)
///
/// Each gives `NAME.files`: every such file's path under the folder and its bytes, in
/// path order, written by the tool `ferry-embed`. Because the files are the target's,
/// SwiftPM plans the build again when one is added or removed, and runs the tool again
/// when one changes. (A folder outside the target would be listed once and then go
/// stale: SwiftPM does not ask a plugin again for a change it does not see.) A target
/// needs at least one Swift file of its own for SwiftPM to build it.
@main
struct EmbedFiles: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let files = module.sourceFiles.map(\.url).filter { $0.pathExtension != "swift" }
        let tool = try context.tool(named: "ferry-embed")
        let root = context.package.directoryURL.standardizedFileURL.path
        return try files.filter { $0.pathExtension == "embed" }.sorted { $0.path < $1.path }.map { manifestURL in
            let manifest = try EmbedManifest(text: try String(contentsOf: manifestURL, encoding: .utf8), path: manifestURL.path)
            let directory = manifestURL.deletingLastPathComponent().appendingPathComponent(manifest.directory)
                .standardizedFileURL
            let base = directory.path
            let names = files.map { $0.standardizedFileURL.path }
                .filter { $0.hasPrefix(base + "/") && !$0.hasSuffix(".embed") }
                .map { String($0.dropFirst(base.count + 1)) }
                .filter { name in manifest.suffixes.isEmpty || manifest.suffixes.contains { name.hasSuffix($0) } }
                .sorted()
            let label = base.hasPrefix(root + "/") ? String(base.dropFirst(root.count + 1)) : directory.lastPathComponent
            let name = manifestURL.deletingPathExtension().lastPathComponent
            let output = context.pluginWorkDirectoryURL.appendingPathComponent("\(name).swift")
            return .buildCommand(
                displayName: "Embedding \(names.count) files of \(label) as \(name)",
                executable: tool.url,
                arguments: [output.path, name, manifest.access, label, base] + names,
                inputFiles: [manifestURL] + names.map { directory.appendingPathComponent($0) },
                outputFiles: [output])
        }
    }
}

/// One `NAME.embed` file, parsed.
struct EmbedManifest {
    var directory = "."
    var suffixes: [String] = []
    var access = "internal"

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    init(text: String, path: String) throws {
        var sawDirectory = false
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[1].isEmpty else {
                throw Failure("\(path):\(number + 1): expected `directory|suffix|access VALUE`, found `\(line)`")
            }
            switch parts[0] {
            case "directory" where !sawDirectory:
                guard !parts[1].hasPrefix("/"), !parts[1].split(separator: "/").contains("..") else {
                    throw Failure("\(path):\(number + 1): the directory must be inside the target, relative to this file")
                }
                directory = parts[1]
                sawDirectory = true
            case "suffix":
                suffixes.append(parts[1])
            case "access" where ["internal", "package", "public"].contains(parts[1]):
                access = parts[1]
            default:
                throw Failure(
                    "\(path):\(number + 1): `\(line)` is not understood (a second directory, or an access "
                        + "other than internal, package or public?)")
            }
        }
    }
}
