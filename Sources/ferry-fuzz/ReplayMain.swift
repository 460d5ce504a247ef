#if !FERRY_FUZZ
import Foundation

/// Without libFuzzer: `ferry-fuzz <target> <file or directory>...` runs a target's
/// checks on saved inputs (a corpus, a crash file), so a finding can be replayed and
/// debugged in an ordinary build.
@main
enum ReplayMain {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget.named(name), arguments.count > 1 else {
            let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
            FileHandle.standardError.write(Data("usage: ferry-fuzz <target> <file or directory>...\ntargets: \(names)\n".utf8))
            exit(2)
        }
        var inputs = 0
        for path in arguments.dropFirst() {
            for file in files(at: path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                    exit(1)
                }
                data.withUnsafeBytes { target.run($0) }
                inputs += 1
            }
        }
        print("\(name): \(inputs) inputs, every property held")
    }

    /// The file itself, or a directory's files in name order.
    private static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().map { path + "/" + $0 }
    }
}
#endif
