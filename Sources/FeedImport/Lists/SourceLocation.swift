import Foundation

/// One address a list gives, checked and made absolute: an http(s) URL, or,
/// in a list read from a file, the path of a file or folder.
///
/// The same rules for OPML and plain lists, so that a source is refused for
/// the same reason, in the same words, whichever list named it.
enum SourceLocation {
    /// The longest address taken, in bytes (`FeedURL` takes no longer).
    static let lengthLimit = 4096

    /// Why an address was refused, in a phrase an operator reads.
    struct Refusal: Error, Equatable {
        var reason: String

        init(_ reason: String) {
            self.reason = reason
        }
    }

    /// `raw` as a location: trimmed; `feed:` turned into the http(s) URL it
    /// wraps; a relative entry resolved against `base`; a `file:` URL turned
    /// into its path. Throws why it cannot be a source.
    static func resolve(_ raw: String, base: SourceListBase) throws(Refusal) -> String {
        let text = raw.trimmingFeedSpace()
        guard !text.isEmpty else { throw Refusal("an empty address") }
        guard text.utf8.count <= lengthLimit else { throw Refusal("an address longer than 4,096 bytes") }
        guard !text.unicodeScalars.contains(where: isControl) else { throw Refusal("a control character in the address") }
        if let scheme = scheme(of: text) {
            switch scheme {
            case "http", "https": return try webURL(text, base: nil)
            case "feed": return try webURL(feedTarget(text), base: nil)
            case "file": return try filePath(fileURL: text, base: base)
            default: throw Refusal("the scheme \(scheme): is not http, https or file")
            }
        }
        switch base {
        case .url(let list):
            // A path from the root reads as a file to whoever wrote the list;
            // on the web it would name another page of the list's host.
            if text.hasPrefix("/") && !text.hasPrefix("//") { throw remoteFile }
            return try webURL(text, base: list)
        case .file(let list):
            return path(text, relativeTo: folder(of: list))
        }
    }

    private static let remoteFile = Refusal("a file, in a list fetched from the web: a remote list never names a file here")

    /// Whether `scalar` is a C0 or C1 control character (or DEL).
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The scheme of `text`, lowercased, when it starts with one (RFC 3986:
    /// a letter, then letters, digits, `+`, `-` or `.`, then `:`).
    static func scheme(of text: some StringProtocol) -> String? {
        var scheme = ""
        for scalar in text.unicodeScalars {
            if scalar == ":" { return scheme.isEmpty ? nil : scheme.lowercased() }
            let isLetter = ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
            let isOther = ("0"..."9").contains(scalar) || scalar == "+" || scalar == "-" || scalar == "."
            guard isLetter || (!scheme.isEmpty && isOther) else { return nil }
            scheme.unicodeScalars.append(scalar)
        }
        return nil
    }

    /// `text` resolved against `base` as an http(s) URL with a host.
    private static func webURL(_ text: String, base: String?) throws(Refusal) -> String {
        // A list's address has no reason to hold a space; one usually means
        // a note written after it, which would be fetched as part of the URL.
        guard !text.unicodeScalars.contains(where: \.properties.isWhitespace) else { throw Refusal("not a URL: it has white space in it") }
        if let url = FeedURL.resolve(text, base: base) { return url }
        let parsed = URL(string: text, relativeTo: base.flatMap { URL(string: $0) })?.absoluteURL
        if let parsed, let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https", parsed.host?.isEmpty ?? true {
            throw Refusal("no host in the URL")
        }
        throw Refusal("not a URL")
    }

    /// The http(s) URL a `feed:` address wraps: `feed://x` is `http://x`,
    /// `feed:https://x` is `https://x`.
    private static func feedTarget(_ text: String) throws(Refusal) -> String {
        let rest = text.dropFirst("feed:".count)
        if rest.hasPrefix("//") { return "http:" + rest }
        if let inner = scheme(of: rest), inner == "http" || inner == "https" { return String(rest) }
        throw Refusal("not a URL: feed: wraps no http(s) URL")
    }

    /// The path a `file:` URL names on this machine.
    private static func filePath(fileURL text: String, base: SourceListBase) throws(Refusal) -> String {
        guard case .file = base else { throw remoteFile }
        guard let url = URL(string: text) else { throw Refusal("not a URL") }
        if let host = url.host, !host.isEmpty, host.lowercased() != "localhost" { throw Refusal("a file URL on another host (\(host))") }
        let path = url.path
        guard path.hasPrefix("/") else { throw Refusal("a file URL without an absolute path") }
        return normalized(path)
    }

    /// `text` as an absolute path: as it is when it starts with `/`, else
    /// beneath `folder`.
    static func path(_ text: String, relativeTo folder: String) -> String {
        normalized(text.hasPrefix("/") ? text : folder + "/" + text)
    }

    /// The folder holding the list file at `listPath` (made absolute against
    /// the working directory when it is not).
    static func folder(of listPath: String) -> String {
        let absolute = listPath.hasPrefix("/") ? listPath : FileManager.default.currentDirectoryPath + "/" + listPath
        var components = normalized(absolute).split(separator: "/")
        if !components.isEmpty { components.removeLast() }
        return "/" + components.joined(separator: "/")
    }

    /// `path` with `.`, `..` and repeated slashes taken out, by its text
    /// alone: nothing on disk is looked at, and `..` never climbs above `/`.
    static func normalized(_ path: String) -> String {
        var kept: [Substring] = []
        for component in path.split(separator: "/") {
            switch component {
            case ".": continue
            case "..": if !kept.isEmpty { kept.removeLast() }
            default: kept.append(component)
            }
        }
        return "/" + kept.joined(separator: "/")
    }

    /// `raw` as a problem shows it: at most 80 characters, control
    /// characters written as escapes.
    static func shown(_ raw: String) -> String {
        var text = ""
        var count = 0
        for scalar in raw.unicodeScalars {
            if count == 80 {
                text += "…"
                break
            }
            text += isControl(scalar) ? "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" : String(scalar)
            count += 1
        }
        return text
    }
}
