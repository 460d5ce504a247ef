#if FERRY_FUZZ
import CLibFuzzer
import Foundation

// The fuzzer build (`-sanitize=fuzzer,address -DFERRY_FUZZ`) has no `@main`. SwiftPM
// links an executable target's entry point as `<module>_main` and aliases `main` to it;
// defining that symbol here keeps libFuzzer's own `main` out and hands libFuzzer's
// driver the arguments, after taking off a leading target name.

/// The target this process fuzzes, from `FERRY_FUZZ_TARGET`. An environment variable
/// rather than an argument because libFuzzer's `-fork` and `-jobs` children get the
/// parent's environment but only the flags libFuzzer knows.
let selectedTarget: FuzzTarget? = getenv("FERRY_FUZZ_TARGET").flatMap { FuzzTarget.named(String(cString: $0)) }

@_cdecl("ferry_fuzz_main")
func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    if count > 1, let first = argv[1], FuzzTarget.named(String(cString: first)) != nil {
        setenv("FERRY_FUZZ_TARGET", first, 1)
        argv[1] = argv[0]
        arguments = argv + 1
        count -= 1
    }
    guard selectedTarget != nil else {
        let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
        FileHandle.standardError.write(Data("usage: ferry-fuzz <target> [libFuzzer flags] [corpus dirs]\ntargets: \(names)\n".utf8))
        return 2
    }
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in
        selectedTarget?.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    }
}
#endif
