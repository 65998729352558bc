// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Warmfeed",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "warmfeed", targets: ["WarmfeedCLI"]),
        // The modules the fuzz harnesses in Fuzz/ (a package of their own) take apart.
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "WarmfeedCore", targets: ["WarmfeedCore"]),
        .library(name: "FeedImport", targets: ["FeedImport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // C shims: one per C library, nothing but a module map and static inline wrappers.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        .systemLibrary(
            name: "CXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // glibc's allocator knobs and counts (<malloc.h>); part of libc, nothing to link.
        .systemLibrary(name: "CMalloc"),
        // epoll, eventfd and accept4 for the HTTP server's own event loop (libc's).
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(
            name: "CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        .systemLibrary(
            name: "CISAL",
            pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"])]
        ),

        // Small sums several modules share: civil-calendar days, FNV-1a hashes, a
        // `Duration`'s seconds and milliseconds, and the HTTP server's connection
        // counts (the operator's stats show the same type). Depends on nothing.
        .target(name: "Reckoning", swiftSettings: crossModule),

        // A number for each thread, and what hangs on it: per-thread counters, and
        // epochs that let readers take no lock. Depends on nothing.
        .target(name: "ThreadSlots", swiftSettings: crossModule),

        // The process's memory: glibc's allocator tuned and read (on CMalloc), and the
        // kernel's counts of it. Knows nothing of feeds.
        .target(name: "SystemMemory", dependencies: ["CMalloc"]),

        // A lock-free gmtime_r for the whole process: glibc's takes the time-zone
        // lock for each response's Date line (`DateLine`'s). C, no library.
        .target(name: "CDateLine", linkerSettings: [.linkedLibrary("dl")]),

        // gzip on libdeflate, for bodies compressed once and served many times.
        .target(name: "Gzip", dependencies: ["CDeflate", "CISAL", "ThreadSlots"]),

        // Mustache templates compiled at load into byte writers. Knows nothing of feeds.
        .target(name: "HTMLTemplates", swiftSettings: crossModule),

        // The HTTP core: its own epoll loop behind Request/Response/Router. Knows nothing of feeds.
        .target(
            name: "HTTPServer",
            dependencies: [
                "CEpoll",
                "CDateLine",
                "Workers",
                "Gzip",
                "Reckoning",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: crossModule
        ),

        // Origin fetches on the libcurl multi interface, with limits. Knows nothing of feeds.
        .target(
            name: "OriginFetcher",
            dependencies: [
                "CCurl",
                "Reckoning",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // Polite polling of many resources: when each is fetched next (its interval and hints,
        // backoff, a host's Retry-After) within per-host and overall limits. A pure state
        // machine: no clock, no I/O, no threads. Knows nothing of feeds, stores or HTTP clients.
        .target(
            name: "Polling",
            dependencies: [
                "Reckoning",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),

        // The image formats thumbnails are made and served in. Depends on nothing.
        .target(name: "ImageFormats"),

        // Threads of their own for blocking work, run in the callers' task priority order. Depends on nothing.
        .target(name: "Workers"),

        // Thumbnails with libvips (shrink-on-load), with limits. Knows nothing of feeds.
        .target(
            name: "Thumbnailer",
            dependencies: ["CVips", "ImageFormats", "Reckoning", "Workers"]
        ),

        // A small pool of blocking hiredis connections on threads of their own, with
        // timeouts, reconnects and a down state. Knows nothing of feeds or thumbnails.
        .target(
            name: "RedisClient",
            dependencies: ["CHiredis", "Reckoning", "Workers", .product(name: "DequeModule", package: "swift-collections")]
        ),

        // Streaming XML on libxml2's SAX push parser: no DTDs, no entities, no network. Knows nothing of feeds.
        .target(name: "XMLStream", dependencies: ["CXML2"]),

        // Reading sources: JSON Feed, RSS, RDF, Atom and image folders into entries. Knows nothing of C or the store.
        .target(
            name: "FeedImport",
            dependencies: ["XMLStream", "Reckoning", .product(name: "SystemPackage", package: "swift-system")]
        ),

        // The feed's model: items, pages, cursors, sentinel placement, the FeedStore
        // protocol, caches and the pure state machines. Knows nothing of C or of any database.
        .target(
            name: "WarmfeedCore",
            dependencies: [
                "Gzip",
                "ImageFormats",
                "Reckoning",
                "SystemMemory",
                "ThreadSlots",
                "Workers",
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: crossModule
        ),

        // The row file and the page index a store keeps beside it, read and written at
        // positions: a deep page found and read with no SQL step. SQLite keeps them from
        // its item table; a PostgreSQL node keeps a copy of the shared feed's.
        .target(name: "PageFiles", dependencies: ["WarmfeedCore"], swiftSettings: crossModule),

        // The feed store in one SQLite file (GRDB; pages on SQLite's C API, one read
        // connection per thread), the embedded default. Knows nothing of HTTP.
        .target(
            name: "SQLiteStore",
            dependencies: [
                "WarmfeedCore",
                "PageFiles",
                "ThreadSlots",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // libpq: blocking PostgreSQL connections with a deadline on every wait, each
        // used by one thread at a time. Knows nothing of feeds.
        .target(name: "PostgresWire", dependencies: ["CLibPQ", "Reckoning"]),

        // The feed store on PostgreSQL (libpq, through PostgresWire), for several servers
        // sharing one feed. Knows nothing of HTTP; callers see only WarmfeedCore's `FeedStore`.
        .target(
            name: "PostgresStore",
            dependencies: [
                "WarmfeedCore",
                "PageFiles",
                "PostgresWire",
                "ThreadSlots",
                "Workers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Bringing a feed in: imports (a feed or a folder of images, in one transaction),
        // the refresher that polls a source, and copies between stores. Knows nothing of HTTP serving.
        .target(
            name: "FeedIngest",
            dependencies: [
                "FeedImport",
                "WarmfeedCore",
                "OriginFetcher",
                "Polling",
                "Thumbnailer",
                "Reckoning",
                "Workers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // The demo origin: pictures painted once, served with a latency like a real
        // image host's, in the server's process or on its own (`warmfeed origin`).
        .target(
            name: "DemoOrigin",
            dependencies: [
                "HTTPServer",
                "Thumbnailer",
                "WarmfeedCore",
                "Reckoning",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Thumbnails: the cache's state machine over memory, the lookup tiers (the disk,
        // a cluster's shared tier on Redis) and originals; the service that runs it with
        // libcurl and libvips; `/thumbs/`. Knows no sibling feature.
        .target(
            name: "Thumbnails",
            dependencies: [
                "WarmfeedCore",
                "HTTPServer",
                "ImageFormats",
                "OriginFetcher",
                "Thumbnailer",
                "RedisClient",
                "Gzip",
                "Reckoning",
                "ThreadSlots",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // The feed's pages: queries, the store read, rendering, the page cache, `/` and
        // `/fragment`. Tells pre-warm of readers through a protocol it owns; knows no sibling feature.
        .target(
            name: "FeedPages",
            dependencies: [
                "WarmfeedCore",
                "HTTPServer",
                "HTMLTemplates",
                "Gzip",
                "Reckoning",
                "ThreadSlots",
                "Thumbnailer",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Pre-warm: which pages to warm ahead of which reader (a pure planner), and the
        // runner that renders them and makes their thumbnails. Uses pages and thumbnails.
        .target(
            name: "Prewarm",
            dependencies: [
                "WarmfeedCore",
                "FeedPages",
                "Thumbnails",
                "ThreadSlots",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // What the operator sees: /admin/cache, the dashboard and /metrics, read from the
        // stats seam that every feature publishes into. Imports no feature.
        .target(
            name: "Operations",
            dependencies: [
                "WarmfeedCore",
                "HTTPServer",
                "HTMLTemplates",
                "SystemMemory",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // The composition root: configuration and wiring only. The one module that imports every feature.
        .target(
            name: "Warmfeed",
            dependencies: [
                "DemoOrigin",
                "FeedIngest",
                "FeedPages",
                "Operations",
                "Prewarm",
                "Thumbnails",
                "HTTPServer",
                "OriginFetcher",
                "Thumbnailer",
                "WarmfeedCore",
                "SQLiteStore",
                "PostgresStore",
                "RedisClient",
                "FeedImport",
                "Gzip",
                "Reckoning",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // The `warmfeed` command.
        .executableTarget(
            name: "WarmfeedCLI",
            dependencies: [
                "Warmfeed",
                "Operations",
                "WarmfeedCore",
                "DemoOrigin",
                "FeedImport",
                "FeedIngest",
                "Reckoning",
                "SystemMemory",
                "Workers",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // A raw loopback HTTP client shared by the server tests.
        .target(name: "HTTPTestClient", path: "Tests/HTTPTestClient"),
        // Feeds the import tests write (RSS, JSON Feed, a hostile one), shared by two test targets.
        .target(name: "FeedFixtures", path: "Tests/FeedFixtures"),
        // Requests through a router in the test's process, with no socket, for route tests.
        .target(name: "HTTPServerTesting", dependencies: ["HTTPServer"], path: "Tests/HTTPServerTesting"),
        .testTarget(name: "ReckoningTests", dependencies: ["Reckoning"]),
        .testTarget(name: "SystemMemoryTests", dependencies: ["SystemMemory"]),
        .testTarget(name: "ThreadSlotsTests", dependencies: ["ThreadSlots"]),
        .testTarget(name: "GzipTests", dependencies: ["Gzip", "CZlib"]),
        .testTarget(name: "HTMLTemplatesTests", dependencies: ["HTMLTemplates"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPTestClient", "CDateLine"]),
        .testTarget(name: "OriginFetcherTests", dependencies: ["OriginFetcher", "HTTPTestClient"]),
        .testTarget(name: "WorkersTests", dependencies: ["Workers"]),
        .testTarget(name: "PollingTests", dependencies: ["Polling"]),
        .testTarget(name: "ThumbnailerTests", dependencies: ["Thumbnailer", "ImageFormats", "CZlib"]),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "HTTPTestClient"]),
        .testTarget(name: "XMLStreamTests", dependencies: ["XMLStream"]),
        .testTarget(name: "FeedImportTests", dependencies: ["FeedImport", "HTTPTestClient"]),
        .testTarget(name: "WarmfeedCoreTests", dependencies: ["WarmfeedCore"]),
        .testTarget(name: "SQLiteStoreTests", dependencies: ["SQLiteStore", "PageFiles", "WarmfeedCore", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "FeedPagesTests",
            dependencies: [
                "FeedPages", "HTTPServer", "HTTPServerTesting", "SQLiteStore", "WarmfeedCore", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "OperationsTests", dependencies: ["Operations", "HTTPServer", "WarmfeedCore"]),
        .testTarget(
            name: "FeedIngestTests",
            dependencies: ["FeedIngest", "FeedFixtures", "FeedImport", "HTTPTestClient", "OriginFetcher", "SQLiteStore", "WarmfeedCore"]
        ),
        .testTarget(
            name: "DemoOriginTests",
            dependencies: ["DemoOrigin", "HTTPTestClient", "Reckoning", "Thumbnailer", "WarmfeedCore", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "PrewarmTests", dependencies: ["Prewarm", "FeedPages", "WarmfeedCore"]),
        .testTarget(name: "ThumbnailsTests", dependencies: ["Thumbnails", "WarmfeedCore", "ImageFormats"]),
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: [
                "PostgresStore", "PostgresWire", "SQLiteStore", "PageFiles", "WarmfeedCore", "Warmfeed", "FeedIngest", "FeedPages", "FeedFixtures",
                "HTTPTestClient", "OriginFetcher",
            ]
        ),
        .testTarget(
            name: "WarmfeedTests",
            dependencies: [
                "Warmfeed", "DemoOrigin", "FeedIngest", "FeedPages", "Operations", "Prewarm", "Thumbnails", "HTTPServer", "WarmfeedCore", "SQLiteStore",
                "PageFiles", "PostgresStore",
                "HTTPTestClient",
                "FeedFixtures",
                "Thumbnailer",
                "OriginFetcher",
                "FeedImport",
                "HTMLTemplates",
                "RedisClient",
                "ImageFormats",
                .product(name: "Logging", package: "swift-log"),
                // Only as the oracle the compiled templates are checked against, byte for byte.
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

/// The small modules below the features that every request passes through
/// (the caches and epochs, the templates, the page files, the HTTP core),
/// with their bodies serialized for the features to specialize (release
/// builds): unspecialized, the page cache's `StripedCache` spent 4% of a deep
/// page's CPU finding generic metadata. Measured on deep pages, alternating
/// three runs each: 40.2 -> 39.4 us with the first two modules, 39.4 -> 38.2
/// with the rest (docs/benchmarks-history.md, issue 35). Not for every module: serialized
/// across GRDB, the compiler crashes.
var crossModule: [SwiftSetting] { [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))] }
