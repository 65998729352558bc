import FeedPages
import HTTPServer

extension PageRenderer {
    /// The renderer for `configuration`, linking the thin client's versioned URLs from `statics`.
    static func load(_ configuration: WarmfeedConfiguration, statics: StaticFiles, epoch: UInt32) throws -> PageRenderer {
        try PageRenderer(
            templatesFolder: configuration.templatesFolder,
            scriptURL: statics.versionedURL(of: "feed.js"),
            styleURL: statics.versionedURL(of: "feed.css"),
            threshold: configuration.threshold,
            epoch: epoch
        )
    }
}
