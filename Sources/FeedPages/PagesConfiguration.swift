import HTTPServer
import WarmfeedCore

/// What the feed's pages can be told, each with its one default: items a
/// page, where its sentinel sits, and the memory for rendered pages.
/// `warmfeed serve`'s options set it (`WarmfeedConfiguration.pages`).
public struct PagesConfiguration: Sendable {
    /// Items per page.
    public var size = 30
    /// Where on each page the sentinel sits, as a share of that page's rows, in (0, 1].
    public var threshold = 0.7
    /// Memory for rendered pages, in bytes.
    public var cacheBytes = 64 << 20

    /// The defaults.
    public init() {}
}

extension PageRenderer {
    /// The renderer `configuration` asks for: the templates in
    /// `templatesFolder`, linking the thin client's versioned files in `statics`.
    package init(_ configuration: PagesConfiguration, templatesFolder: String, statics: StaticFiles, epoch: UInt32) throws {
        try self.init(
            templatesFolder: templatesFolder, scriptURL: statics.versionedURL(of: "feed.js"), styleURL: statics.versionedURL(of: "feed.css"),
            threshold: configuration.threshold, epoch: epoch)
    }
}

extension PageService {
    /// The pages as `configuration` says: its templates compiled from
    /// `templatesFolder` (linking the thin client's versioned files in
    /// `statics`), its cache made, over `store`.
    package convenience init(
        _ configuration: PagesConfiguration, templatesFolder: String, statics: StaticFiles, store: any FeedStore,
        previewGeneration: @escaping @Sendable () -> Int
    ) throws {
        let renderer = try PageRenderer(configuration, templatesFolder: templatesFolder, statics: statics, epoch: store.epoch)
        self.init(
            store: store, renderer: renderer, cache: PageCache(capacityBytes: configuration.cacheBytes), pageSize: configuration.size,
            previewGeneration: previewGeneration)
    }
}
