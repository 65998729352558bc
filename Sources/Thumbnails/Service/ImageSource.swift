import WarmfeedCore

/// Where an item's original image is fetched from, and how far that place is trusted.
///
/// Only URLs stored with an item are ever fetched: a visitor names an item id,
/// never a URL. Demo items store `demo:<n>.<ext>`, which points at the demo
/// origin wherever it listens this time: a URL the server builds from its own
/// configuration, trusted. A feed's image URL is someone else's, fetched under
/// the operator's address policy. A folder import's `file://` URL is read only
/// beneath the folders imported.
package struct ImageSource: Sendable {
    /// What an item's original is, for the fetch.
    struct Original: Sendable, Equatable {
        /// How the URL came to be, which decides what it may reach.
        enum Kind: Sendable, Equatable {
            /// Built by the server from its demo origin's address (embedded, or `--demo-origin`).
            case demo
            /// Named by a feed: fetched where the address policy allows.
            case feed
            /// A file of a folder import: read beneath the folders imported only.
            case file
        }

        var url: String
        var kind: Kind
    }

    /// The demo origin's base URL, when one runs and listens (nil without one,
    /// or before it listens: demo pictures are then not fetched).
    var demoBase: @Sendable () -> String?
    /// The folders whose files items may show (absolute, without symbolic
    /// links): asked with `refresh` when a file was refused, in case a folder
    /// was imported since they were last read.
    var folders: @Sendable (_ refresh: Bool) async -> [String]

    package init(
        demoBase: @escaping @Sendable () -> String? = { nil },
        folders: @escaping @Sendable (_ refresh: Bool) async -> [String] = { _ in [] }
    ) {
        self.demoBase = demoBase
        self.folders = folders
    }

    /// What to fetch for `item`'s image, or nil when it has none we may fetch.
    func original(of item: FeedItem) -> Original? {
        guard let image = item.imageURL else { return nil }
        if image.hasPrefix("demo:") {
            guard let demoBase = demoBase() else { return nil }
            let width = item.imageWidth ?? 1600
            let height = item.imageHeight ?? 1200
            return Original(url: "\(demoBase)/originals/\(image.dropFirst(5))?w=\(width)&h=\(height)", kind: .demo)
        }
        let lower = image.prefix(8).lowercased()
        if lower.hasPrefix("file://") { return Original(url: image, kind: .file) }
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else { return nil }
        return Original(url: image, kind: .feed)
    }

    /// The URL to fetch for `item`'s image, or nil when it has none we may fetch.
    func url(for item: FeedItem) -> String? { original(of: item)?.url }
}
