// swift-tools-version:6.0
import PackageDescription

// libFuzzer harnesses over the parsers that read what strangers send: request
// targets, request heads (as libmicrohttpd cut them and as the server's own
// loop reads them), cursors, XML and JSON feeds. One executable each,
// in a package of its own so that building Warmfeed never needs the fuzzer
// runtime. scripts/fuzz builds them (with which flags, and why, is said there)
// and runs each for a while over its seeds in Corpus/<harness>, with the
// words of its format in Dictionaries/<harness>.dict.
let package = Package(
    name: "WarmfeedFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named, because a path dependency is otherwise named after its folder,
        // which is whatever the clone is called.
        .package(name: "Warmfeed", path: "..")
    ],
    targets: [
        .executableTarget(
            name: "FuzzRequestTarget",
            dependencies: ["FuzzSupport", .product(name: "HTTPServer", package: "Warmfeed")]
        ),
        .executableTarget(
            name: "FuzzRequestHead",
            dependencies: ["FuzzSupport", "HeadRules", .product(name: "HTTPServer", package: "Warmfeed")]
        ),
        .executableTarget(
            name: "FuzzHeadParser",
            dependencies: ["FuzzSupport", "HeadRules", .product(name: "HTTPServer", package: "Warmfeed")]
        ),
        .executableTarget(
            name: "FuzzCursor",
            dependencies: ["FuzzSupport", .product(name: "WarmfeedCore", package: "Warmfeed")]
        ),
        .executableTarget(
            name: "FuzzXMLFeed",
            dependencies: ["FuzzSupport", "FeedChecks", .product(name: "FeedImport", package: "Warmfeed")]
        ),
        .executableTarget(
            name: "FuzzJSONFeed",
            dependencies: ["FuzzSupport", "FeedChecks", .product(name: "FeedImport", package: "Warmfeed")]
        ),
        // `check`: a property that does not hold becomes a libFuzzer crash.
        .target(name: "FuzzSupport"),
        // RFC 9112's head rules written out plainly, which both head harnesses hold the server to.
        .target(name: "HeadRules"),
        // What both feed harnesses check of every parse.
        .target(
            name: "FeedChecks",
            dependencies: ["FuzzSupport", .product(name: "FeedImport", package: "Warmfeed")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
