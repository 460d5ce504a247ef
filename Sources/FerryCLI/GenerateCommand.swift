import ArgumentParser
import Foundation

/// `ferry generate swift`: a FerryKit record struct per resource, from a
/// running server's schema or a saved copy of it.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Generate client code from the schema a server serves.", subcommands: [SwiftModelsCommand.self]
    )
}

struct SwiftModelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swift",
        abstract: "Write a FerryKit record struct (FerryRecord) per resource, one Swift file each.",
        discussion: """
            Columns become typed properties (optional where the server may send null or fills the value), references \
            typed ids (FerryID<StudySet>), ranked resources FerryRankedRecord, a stream's root resource FerryStreamRoot \
            (engine.subscribe(StudySet.self, id:)), and PostgreSQL column comments doc comments.
            Examples:
              ferry generate swift --from http://127.0.0.1:8080 --output Sources/Models
              curl -s https://sync.example.com/openapi.json | ferry generate swift --from - --output Sources/Models
              ferry generate swift --from http://127.0.0.1:8080 --output Sources/Models --check    # in CI
            """
    )

    @Option(
        help:
            "The schema: a server's http:// URL (its /openapi.json is read, no token needed), a file holding that document or a GET /v1 listing, or - for standard input."
    )
    var from: String

    @Option(help: "The directory to write the files into (created if missing). Generated files no longer needed are removed.")
    var output: String

    @Flag(help: "Write nothing: exit 1 naming every file that differs from what would be written.")
    var check = false

    func run() throws {
        let resources: [SwiftModels.Resource]
        let streams: [SwiftModels.Stream]
        do {
            let input = try read()
            resources = try SwiftModels.resources(from: input)
            streams = try SwiftModels.streams(from: input)
        } catch let unreadable as SwiftModels.Unreadable {
            throw CLIError("\(from): \(unreadable.description)")
        }
        guard !resources.isEmpty else { throw CLIError("\(from): the schema has no resources (is the database migrated?)") }
        for warning in SwiftModels.warnings(resources) {
            FileHandle.standardError.write(Data("ferry generate swift: warning: \(warning)\n".utf8))
        }
        let files = SwiftModels.files(resources, streams: streams)
        let directory = URL(fileURLWithPath: output, isDirectory: true)
        let generated = try generatedFiles(in: directory)
        let stale = generated.subtracting(files.keys)
        var differing: [String] = []
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            let path = directory.appendingPathComponent(name)
            let existing = try? String(contentsOf: path, encoding: .utf8)
            if existing == text { continue }
            if existing != nil, !generated.contains(name) {
                throw CLIError("\(path.path) exists and was not written by ferry generate swift: move it, or generate into another directory")
            }
            differing.append(existing == nil ? "\(name) is missing" : "\(name) differs")
            guard !check else { continue }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: path)
        }
        if check {
            let problems = differing + stale.sorted().map { "\($0) is generated but no longer needed" }
            guard problems.isEmpty else {
                throw CLIError(
                    "\(output) is not what the schema generates: " + problems.joined(separator: "; ")
                        + ". Run the same command without --check to update it.")
            }
            print("\(output): \(files.count) files, as generated")
            return
        }
        for name in stale { try FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        print("\(output): \(files.count) files, \(differing.count) written, \(stale.count) removed")
    }

    /// The files in `directory` that an earlier run generated.
    func generatedFiles(in directory: URL) throws -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return Set(
            names.filter { name in
                name.hasSuffix(".swift")
                    && ((try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))?.hasPrefix(SwiftModels.header) ?? false)
            })
    }

    func read() throws -> Data {
        if from == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        if from.hasPrefix("http://") || from.hasPrefix("https://") {
            do {
                return try PlainHTTP.get(from)
            } catch let failure as PlainHTTP.Failure {
                throw CLIError("\(from): \(failure.description)")
            }
        }
        guard let data = FileManager.default.contents(atPath: from) else { throw CLIError("\(from): no such file, or it cannot be read") }
        return data
    }
}
