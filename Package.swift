// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "uploader",
    products: [
        .executable(name: "uploader", targets: ["uploader"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CInotifyTools",
            providers: [.apt(["libinotifytools0-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "CSysShims"),
        .target(
            name: "UploaderCore",
            dependencies: ["CCurl", "CInotifyTools", "COpenSSL", "CSysShims"]
        ),
        .executableTarget(name: "uploader", dependencies: ["UploaderCore"]),
        .testTarget(name: "UploaderCoreTests", dependencies: ["UploaderCore"], exclude: ["Fixtures"]),
        .testTarget(name: "IntegrationTests", dependencies: ["UploaderCore"]),
    ],
    swiftLanguageModes: [.v6]
)
