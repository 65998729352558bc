import Foundation
import Reckoning

/// Decides what a `RawEntry` means: which image wins, what its text is, which
/// date applies, what its key is. The same rules for every format.
public struct EntryBuilder: Sendable {
    /// Longest title kept, in characters (a title is one line of a row).
    public static let titleLimit = 300
    /// Longest summary kept, in characters.
    public static let summaryLimit = 600
    /// Longest id kept as is; a longer one is replaced by its digest.
    static let idLimit = 512

    /// The source's own URL: relative URLs resolve against it when the entry names no base.
    public var sourceURL: String?
    /// Whether images may be `file://` URLs (a folder import only; a feed never may).
    public var allowFileImages: Bool
    /// Now, for refusing dates too far in the future.
    public var now: Date

    /// A builder for one import.
    public init(sourceURL: String? = nil, allowFileImages: Bool = false, now: Date = Date()) {
        self.sourceURL = sourceURL
        self.allowFileImages = allowFileImages
        self.now = now
    }

    /// The clean entry, or the reason `raw` cannot be one.
    public func build(_ raw: RawEntry) -> Result<ImportedEntry, ImportProblem> {
        let line = raw.line > 0 ? raw.line : nil
        let link = FeedURL.resolve(raw.link, base: raw.baseURL, fallbackBase: sourceURL)
        let summaryText = Self.limited(HTMLText.plainText(raw.summary ?? raw.contentHTML ?? ""), to: Self.summaryLimit)
        var title = Self.limited(HTMLText.plainText(raw.title ?? ""), to: Self.titleLimit)
        let image = chooseImage(raw)
        if title.isEmpty {
            // The link's host, decoded by Foundation, can hold any byte the
            // link escaped (a DEL, found by Fuzz/FuzzJSONFeed): it is cleaned as text is.
            title = !summaryText.isEmpty
                ? Self.limited(summaryText, to: 80)
                : Self.limited(HTMLText.plainText(link.flatMap { URL(string: $0)?.host } ?? ""), to: 80)
        }
        if title.isEmpty, image == nil {
            return .failure(ImportProblem(line: line, reason: "an empty item: no title, text, link or image"))
        }
        if title.isEmpty { title = "Untitled" }
        let guid: String
        if let id = raw.id?.trimmingFeedSpace(), !id.isEmpty {
            guid = id.utf8.count <= Self.idLimit ? id : "digest:" + Self.digest(id)
        } else if let link {
            guid = link.utf8.count <= Self.idLimit ? link : "digest:" + Self.digest(link)
        } else {
            guid = "digest:" + Self.digest([title, summaryText, raw.published ?? "", image?.url ?? ""].joined(separator: "\u{1F}"))
        }
        return .success(ImportedEntry(
            guid: guid, title: title, summary: summaryText == title ? "" : summaryText, link: link,
            imageURL: image?.url, imageWidth: image?.width, imageHeight: image?.height,
            published: date(raw), line: raw.line
        ))
    }

    /// The first usable image: the format's own field, then Media RSS, then an
    /// image enclosure, then the first `<img>` of the content.
    func chooseImage(_ raw: RawEntry) -> (url: String, width: Int?, height: Int?)? {
        let ranked = raw.images.enumerated().sorted { ($0.element.kind, $0.offset) < ($1.element.kind, $1.offset) }
        for (_, candidate) in ranked {
            if let type = candidate.mimeType?.lowercased(), !type.isEmpty, !type.hasPrefix("image/") { continue }
            if candidate.kind == .enclosure, candidate.mimeType?.isEmpty ?? true, !Self.looksLikeImage(candidate.url) { continue }
            guard let url = FeedURL.resolve(candidate.url, base: raw.baseURL, fallbackBase: sourceURL, allowFile: allowFileImages)
            else { continue }
            return (url, Self.sane(candidate.width), Self.sane(candidate.height))
        }
        for html in [raw.contentHTML, raw.summary].compactMap({ $0 }) {
            if let found = HTMLText.firstImage(html),
                let url = FeedURL.resolve(found.src, base: raw.baseURL, fallbackBase: sourceURL)
            {
                return (url, Self.sane(found.width), Self.sane(found.height))
            }
        }
        return nil
    }

    /// The publication date, the update date, or a date already known; a date
    /// more than a day ahead of now is refused (it would pin the item to the top).
    func date(_ raw: RawEntry) -> Date? {
        let found = raw.published.flatMap(FeedDate.parse) ?? raw.updated.flatMap(FeedDate.parse) ?? raw.publishedDate
        guard let found, found <= now.addingTimeInterval(86_400) else { return nil }
        return found
    }

    private static func looksLikeImage(_ url: String) -> Bool {
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init)?.lowercased() ?? ""
        return [".jpg", ".jpeg", ".png", ".webp", ".gif", ".avif", ".tif", ".tiff", ".heic"].contains { path.hasSuffix($0) }
    }

    private static func sane(_ dimension: Int?) -> Int? {
        guard let dimension, dimension > 0, dimension <= 100_000 else { return nil }
        return dimension
    }

    /// `text` cut to `limit` characters at a word boundary when one is near, with an ellipsis.
    static func limited(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit, text.count > limit else { return text }
        var cut = text.prefix(limit - 1)
        if let space = cut.lastIndex(of: " "), cut.distance(from: space, to: cut.endIndex) < 30 {
            cut = cut[..<space]
        }
        return String(cut) + "…"
    }

    /// A stable 64-bit FNV-1a digest, hex: keys for entries without an id or link.
    static func digest(_ text: String) -> String {
        String(FNV1a.hash64(text.utf8), radix: 16)
    }
}
