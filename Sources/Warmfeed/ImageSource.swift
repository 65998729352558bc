import DemoOrigin
import WarmfeedCore

/// Where an item's original image is fetched from.
///
/// Only URLs stored with an item are ever fetched: a visitor names an item id,
/// never a URL. Demo items store `demo:<n>.<ext>`, which points at the demo
/// origin wherever it listens this time.
struct ImageSource: Sendable {
    /// The demo origin, when it runs in this process; its port is known once it has started.
    var demo: DemoOrigin?
    /// The demo origin of a cluster (`warmfeed origin`), when it runs apart.
    var demoBaseURL: String?

    /// The URL to fetch for `item`'s image, or nil when it has none we may fetch.
    func url(for item: FeedItem) -> String? {
        guard let image = item.imageURL else { return nil }
        if image.hasPrefix("demo:") {
            let demoBase: String
            if let demoBaseURL {
                demoBase = demoBaseURL
            } else {
                guard let demo, demo.server.port > 0 else { return nil }
                demoBase = demo.baseURL
            }
            let width = item.imageWidth ?? 1600
            let height = item.imageHeight ?? 1200
            return "\(demoBase)/originals/\(image.dropFirst(5))?w=\(width)&h=\(height)"
        }
        let lower = image.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("file://") else { return nil }
        return image
    }
}
