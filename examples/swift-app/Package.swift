// swift-tools-version:6.0
// An app that uses FerryKit from outside Ferry's repository, as any app
// would: a package that depends on Ferry (here by path; by URL elsewhere) and
// links the FerryKit product, with the study example's generated models.
// CI builds it and runs it against a real `ferry serve` (OutsidePackageTests).
import PackageDescription

let package = Package(
    name: "swift-app",
    platforms: [.macOS(.v14), .iOS(.v16)],
    dependencies: [
        // An app elsewhere names its checkout of Ferry the same way (CHANGELOG.md,
        // "Depending on FerryKit"): Ferry has no package URL yet.
        .package(name: "Ferry", path: "../.."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "swift-app",
            dependencies: [
                .product(name: "FerryKit", package: "Ferry"),
                .product(name: "StudyModels", package: "Ferry"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources"
        )
    ],
    swiftLanguageModes: [.v6]
)
