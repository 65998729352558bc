import Foundation
import XMLStream

/// The elements of the RSS modules every format may carry: content
/// (`content:encoded`), Dublin Core dates, iTunes' item image, Media RSS.
enum ModuleElements {
    /// A direct child of an entry in a module's namespace starts: the field
    /// to read its text into, if any; `itunes:image` is taken right away.
    static func childStarted(_ element: XMLStartElement, entry: inout OpenEntry, depth: Int) -> FieldCapture? {
        let name = element.name
        switch (FeedNamespace.of(name), name.localName) {
        case (FeedNamespace.content, "encoded"): return FieldCapture(.content, depth: depth, line: element.line)
        case (FeedNamespace.dublinCore, "date"): return FieldCapture(.published, depth: depth, line: element.line)
        case (FeedNamespace.dublinCore, "modified"): return FieldCapture(.updated, depth: depth, line: element.line)
        case (FeedNamespace.itunes, "image"):
            if let href = element.attribute("href") { entry.add(ImageCandidate(kind: .own, url: href)) }
            return nil
        default: return nil
        }
    }

    /// The image a Media RSS element names, at any depth in an entry (inside
    /// `media:group`, or a video's `media:content`): `media:thumbnail`, and
    /// `media:content` that is an image by its `medium`, its `type`, or, with
    /// neither, its URL's extension.
    static func mediaImage(_ element: XMLStartElement) -> ImageCandidate? {
        guard FeedNamespace.of(element.name) == FeedNamespace.media, let url = element.attribute("url") else { return nil }
        let width = element.attribute("width").flatMap { Int($0.trimmingFeedSpace()) }
        let height = element.attribute("height").flatMap { Int($0.trimmingFeedSpace()) }
        switch element.name.localName {
        case "thumbnail":
            return ImageCandidate(kind: .media, url: url, width: width, height: height)
        case "content":
            let medium = element.attribute("medium")?.lowercased()
            let type = element.attribute("type")
            let isImage =
                medium == "image" || type?.lowercased().hasPrefix("image/") == true
                || (medium == nil && type == nil && looksLikeImage(url))
            return isImage ? ImageCandidate(kind: .media, url: url, width: width, height: height, mimeType: type) : nil
        default:
            return nil
        }
    }

    /// Whether `url`'s path ends in an image file extension.
    static func looksLikeImage(_ url: String) -> Bool {
        let path = url.prefix { $0 != "?" && $0 != "#" }
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return false }
        return imageExtensions.contains(path[path.index(after: dot)...].lowercased())
    }

    private static let imageExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "jfif", "png", "gif", "webp", "avif", "heic", "heif", "bmp", "tif", "tiff", "svg",
    ]
}
