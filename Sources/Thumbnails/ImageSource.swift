import WarmfeedCore

/// Where an item's original image is fetched from.
///
/// Only URLs stored with an item are ever fetched: a visitor names an item id,
/// never a URL. Demo items store `demo:<n>.<ext>`, which points at the demo
/// origin wherever it listens this time.
package struct ImageSource: Sendable {
    /// The demo origin's base URL, when one runs and listens (nil without one,
    /// or before it listens: demo pictures are then not fetched).
    var demoBase: @Sendable () -> String?

    package init(demoBase: @escaping @Sendable () -> String? = { nil }) {
        self.demoBase = demoBase
    }

    /// The URL to fetch for `item`'s image, or nil when it has none we may fetch.
    func url(for item: FeedItem) -> String? {
        guard let image = item.imageURL else { return nil }
        if image.hasPrefix("demo:") {
            guard let demoBase = demoBase() else { return nil }
            let width = item.imageWidth ?? 1600
            let height = item.imageHeight ?? 1200
            return "\(demoBase)/originals/\(image.dropFirst(5))?w=\(width)&h=\(height)"
        }
        let lower = image.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("file://") else { return nil }
        return image
    }
}
