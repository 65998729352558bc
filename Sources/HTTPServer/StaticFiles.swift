import Foundation
import Gzip
import Reckoning

/// Serves the files of one folder (`Public/`) from memory.
///
/// Files are read once at start and kept with their gzip form (compressed once,
/// served when the client accepts gzip and it is smaller), a strong ETag, and a
/// versioned URL: `/static/feed.js?v=<tag>` is cached for a year as immutable,
/// the bare URL is revalidated with `If-None-Match` and answered 304. Only files
/// found in the folder at start can be served, so no path can leave it.
///
/// A script is served without its comment lines (`withoutCommentLines`): its
/// comments are for whoever reads the source, and a reader on a slow network
/// should not download them.
public struct StaticFiles: Sendable {
    /// One served file.
    public struct File: Sendable {
        /// The bytes served: as on disk, but for a script's comment lines.
        public let body: ResponseBytes
        /// The gzip form, when it is smaller.
        public let gzipped: ResponseBytes?
        /// The strong entity tag, quoted.
        public let etag: String
        /// A short tag for versioned URLs.
        public let version: String
        /// The media type.
        public let contentType: String
    }

    /// Why the folder could not be loaded.
    public struct LoadError: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// The URL prefix files are served under.
    public let prefix: String
    private let files: [String: File]

    /// Loads every regular, non-hidden file below `folder` (up to `maxFileBytes` each).
    public init(folder: String, prefix: String = "/static/", maxFileBytes: Int = 8 << 20) throws {
        self.prefix = prefix
        let root = URL(fileURLWithPath: folder, isDirectory: true).standardizedFileURL
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey], options: [.skipsHiddenFiles]
            )
        else {
            throw LoadError(description: "cannot read the static folder \(folder)")
        }
        var files: [String: File] = [:]
        for case let url as URL in enumerator {
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values.isRegularFile == true, (values.fileSize ?? 0) <= maxFileBytes else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.path.count + 1))
            let bytes = [UInt8](try Data(contentsOf: url))
            files[relative] = Self.makeFile(relative.hasSuffix(".js") ? Self.withoutCommentLines(bytes) : bytes, name: relative)
        }
        self.files = files
    }

    /// The file served at `prefix + name`, if any.
    public func file(named name: String) -> File? { files[name] }

    /// The versioned URL of `name`, safe to cache for ever (falls back to the bare URL).
    public func versionedURL(of name: String) -> String {
        guard let file = files[name] else { return prefix + name }
        return prefix + name + "?v=" + file.version
    }

    /// Answers a request whose path starts with `prefix`.
    public func reply(to request: Request) -> Response {
        let name = String(request.path.dropFirst(prefix.count))
        guard let file = files[name] else {
            return .plain(404, "no such static file: \(name.prefix(200))")
        }
        let versioned = request.queryValues("v") == [file.version]
        var headers: HTTPFields = [
            .eTag: file.etag,
            // No `public`: nothing here is behind authentication, so every cache may keep it anyway.
            .cacheControl: versioned ? "max-age=31536000, immutable" : "no-cache",
            .vary: "Accept-Encoding",
        ]
        if request.ifNoneMatch(matches: file.etag) {
            return Response(status: 304, headers: headers)
        }
        headers[.contentType] = file.contentType
        if let gzipped = file.gzipped, request.acceptsGzip {
            headers[.contentEncoding] = "gzip"
            return Response(status: 200, headers: headers, body: gzipped)
        }
        return Response(status: 200, headers: headers, body: file.body)
    }

    /// A script without the lines that hold only a `//` comment (and blanks
    /// before it). Nothing else is touched: a comment after code stays, and a
    /// script whose string or template literal spans lines with `//` at their
    /// start must not be served from here (ours do not).
    static func withoutCommentLines(_ bytes: [UInt8]) -> [UInt8] {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).filter { line in
            !line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")])
        }
        return Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    }

    static func makeFile(_ bytes: [UInt8], name: String) -> File {
        let hash = FNV1a.hash64(bytes)
        let version = String(String(hash, radix: 36).prefix(10))
        let type = contentType(of: name)
        let compressible = type.hasPrefix("text/") || type.contains("javascript") || type.contains("json") || type.contains("svg")
        var gzipped: ResponseBytes?
        if compressible {
            let packed = Gzip.compress(bytes)
            if !packed.isEmpty, packed.count < bytes.count { gzipped = ResponseBytes(packed) }
        }
        return File(body: ResponseBytes(bytes), gzipped: gzipped, etag: "\"\(String(hash, radix: 16))\"", version: version, contentType: type)
    }

    static func contentType(of name: String) -> String {
        switch name.split(separator: ".").last?.lowercased() ?? "" {
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "html", "htm": "text/html; charset=utf-8"
        case "txt": "text/plain; charset=utf-8"
        case "json": "application/json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "webp": "image/webp"
        case "gif": "image/gif"
        case "ico": "image/x-icon"
        case "woff2": "font/woff2"
        default: "application/octet-stream"
        }
    }
}
