// swift-tools-version:6.0
import PackageDescription

// Layers, lowest first. An arrow is an allowed import:
//   FerryCLI (the `ferry` command) -> Ferry -> FerryHTTP, FerryPostgres, FerryMemcached, FerryRank
//   FerryHTTP, FerryPostgres, FerryMemcached -> FerryBase (the one lock type)
//   Ferry -> CCurlFetch (one GET through libcurl, for JWT providers' key sets)
//   FerryCLI (the `ferry` command) -> FerryMigrations -> FerryPostgres, FerryCoreMigrations (migrations/, built in by EmbedFiles)
//   FerryKit (the client an app links) -> FerryRank, GRDB; never a server module
//   StudyModels (the study example's generated records) -> FerryKit, GRDB
//   ferry-notes (a terminal app on FerryKit) -> FerryKit, StudyModels, GRDB
//   ferry-fuzz (libFuzzer targets) -> Ferry, FerryHTTP, FerryRank
// The lower layers know nothing of Ferry's domain.
let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v14), .iOS(.v16)],
    products: [
        .executable(name: "ferry", targets: ["FerryCLI"]),
        .executable(name: "ferry-notes", targets: ["ferry-notes"]),
        .library(name: "FerryRank", targets: ["FerryRank"]),
        .library(name: "FerryKit", targets: ["FerryKit"]),
        // The study example's generated records, for apps on the example schema (examples/swift-app).
        .library(name: "StudyModels", targets: ["StudyModels"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // 4.x: what jwt-kit 5 needs; the API Ferry uses is the same in 3.x.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        // JWT verification (issue 36): signatures and JWK key import only; Ferry parses and checks the claims.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CLibMemcached", pkgConfig: "libmemcached", providers: [.apt(["libmemcached-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Swift's Glibc module does not expose sys/epoll.h; this map does.
        .systemLibrary(name: "CEpoll"),
        // libFuzzer's driver entry, for ferry-fuzz's fuzzer build; nothing to link otherwise.
        .systemLibrary(name: "CLibFuzzer"),
        // One GET through libcurl's easy interface (a C function: Swift cannot call the
        // variadic curl_easy_setopt), for JWT providers' key sets (JWKSFetch).
        .target(name: "CCurlFetch", linkerSettings: [.linkedLibrary("curl")]),
        // What every server module shares and none owns: the one lock type.
        .target(name: "FerryBase"),
        .target(name: "FerryHTTP", dependencies: ["FerryBase", "CEpoll", "CZlib", .product(name: "Logging", package: "swift-log")]),
        .target(name: "FerryPostgres", dependencies: ["FerryBase", "CLibPQ"]),
        .target(name: "FerryMemcached", dependencies: ["FerryBase", "CLibMemcached"]),
        .target(name: "FerryRank"),
        // Builds files into a target as Swift constants at build time: a target holds a
        // `NAME.embed` naming a folder (Sources/EmbedFiles/EmbedFiles.swift says how).
        .executableTarget(name: "ferry-embed"),
        .plugin(name: "EmbedFiles", capability: .buildTool(), dependencies: ["ferry-embed"], path: "Sources/EmbedFiles"),
        // Ferry's own migrations, the .sql files of migrations/, built in (migrations/README.md).
        .target(
            name: "FerryCoreMigrations", path: "migrations", exclude: ["README.md", "schema.snapshot.sql"], plugins: ["EmbedFiles"]),
        // `ferry migrate`'s engine: files, tracks, plan, advisory lock, history. Only the CLI and the tests use it.
        .target(
            name: "FerryMigrations",
            dependencies: ["FerryCoreMigrations", "FerryPostgres", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(
            name: "Ferry",
            dependencies: [
                "CCurlFetch", "FerryBase", "FerryHTTP", "FerryPostgres", "FerryMemcached", "FerryRank",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            // The console's pages (Console/Assets), built in as ConsoleAssetFiles.files.
            plugins: ["EmbedFiles"]
        ),
        // The `ferry` command. Its folder is not `Sources/ferry`: on a case-insensitive file
        // system (macOS's default) that is the same folder as `Sources/Ferry`.
        .executableTarget(
            name: "FerryCLI",
            dependencies: [
                "Ferry", "FerryBase", "FerryHTTP", "FerryMigrations", "FerryPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // `ferry init`'s files (Scaffold/), built in by EmbedFiles.
            plugins: ["EmbedFiles"]
        ),
        // The client: SQLite through GRDB, HTTP through Foundation's URLSession.
        .target(name: "FerryKit", dependencies: ["FerryRank", .product(name: "GRDB", package: "GRDB.swift")]),
        // The study example's records, written by `ferry generate swift` (CI checks they are what
        // the schema generates: GenerateSwiftCommandTests).
        .target(name: "StudyModels", dependencies: ["FerryKit", .product(name: "GRDB", package: "GRDB.swift")], path: "examples/study/Models"),
        // An app on FerryKit, as a person would use it: the example schema's study
        // sets and terms in a terminal, offline and back. Links no server module.
        .executableTarget(
            name: "ferry-notes",
            dependencies: [
                "FerryKit", "StudyModels", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // libFuzzer targets over the code that reads client bytes (bench/fuzz/README.md).
        // A normal build makes a tool that replays inputs; bench/fuzz/run.sh builds it with
        // -sanitize=fuzzer,address -DFERRY_FUZZ, where libFuzzer's driver runs it instead.
        .executableTarget(
            name: "ferry-fuzz",
            dependencies: [
                "CLibFuzzer", "Ferry", "FerryHTTP", "FerryRank",
                // The jwt target checks accepted signatures with swift-crypto, apart from jwt-kit.
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "FerryHTTPTests",
            // FerryBase for its Locked: ThreadSanitizer (.ci/tsan.sh) follows its pthread mutex, not a contended Synchronization.Mutex.
            dependencies: ["FerryBase", "FerryHTTP", "FerryHTTPTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "FerryPostgresTests", dependencies: ["FerryPostgres", "FerryHTTPTestSupport", "FerryTestSupport"]),
        .testTarget(name: "FerryMemcachedTests", dependencies: ["FerryMemcached", "FerryHTTPTestSupport", "FerryTestSupport"]),
        .testTarget(name: "FerryRankTests", dependencies: ["FerryRank"]),
        // For the HTTP layer's tests, which build without libpq or libmemcached, and every
        // other test target: the raw-socket HTTP client, the one way to start a test's
        // HTTP server, waits on conditions, a zlib codec that shares no code with the server's.
        .target(name: "FerryHTTPTestSupport", dependencies: ["CZlib", "FerryHTTP", .product(name: "Logging", package: "swift-log")]),
        // Shared by the server's and the client's test targets: scratch databases, Ferry
        // servers in process and as processes.
        .target(
            name: "FerryTestSupport",
            dependencies: [
                "Ferry", "FerryBase", "FerryHTTP", "FerryHTTPTestSupport", "FerryMigrations", "FerryPostgres",
                .product(name: "Logging", package: "swift-log"),
                // The test identity provider signs JWTs with swift-crypto itself, apart from jwt-kit.
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // FerryKit's test records, its example schema and a scripted transport: shared by its unit
        // and integration tests, and like FerryKit itself free of every server module.
        .target(name: "FerryKitTestSupport", dependencies: ["FerryKit", .product(name: "GRDB", package: "GRDB.swift")]),
        // FerryKit's unit tests: no I/O, no server module, so they build and run wherever FerryKit
        // ships (`swift build --target FerryKitUnitTests` on macOS builds none of Linux's epoll).
        .testTarget(
            name: "FerryKitUnitTests",
            dependencies: ["FerryKit", "FerryKitTestSupport", "FerryRank", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        // FerryKit against a real `ferry serve`: integration, the simulation, ferry-notes in tmux.
        .testTarget(
            name: "FerryKitTests",
            dependencies: [
                "FerryKit", "FerryKitTestSupport", "FerryHTTPTestSupport", "FerryPostgres", "FerryRank", "FerryTestSupport",
                "StudyModels", "ferry-notes", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The migration engine against a real PostgreSQL; the legacy layout it upgrades is in Fixtures.
        .testTarget(
            name: "FerryMigrationsTests",
            dependencies: ["Ferry", "FerryHTTPTestSupport", "FerryMigrations", "FerryPostgres", "FerryTestSupport"],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "FerryTests",
            dependencies: [
                "Ferry", "FerryBase", "FerryHTTP", "FerryHTTPTestSupport", "FerryMigrations", "FerryPostgres", "FerryMemcached",
                "FerryRank", "FerryTestSupport",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The plans' SQL, read by ResourcePlanTests from the source tree, not bundled.
            exclude: ["Planning/Snapshots"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
