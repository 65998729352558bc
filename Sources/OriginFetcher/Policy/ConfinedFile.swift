import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `file://` URL's file, opened only when it lies beneath one of the allowed
/// folders and is reached without a symbolic link (`FetchLimits.fileRoots`).
///
/// The path is opened one component at a time, each `openat` relative to the
/// folder opened before with `O_NOFOLLOW`, after `.` and `..` were refused: no
/// symbolic link is followed and nothing outside the folder is reached,
/// whatever is swapped in on the way (the walk `openat2`'s `RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS` does in one call, which macOS lacks). libcurl then
/// reads the file through its descriptor (`/proc/self/fd/N`: the open file
/// itself, not a path looked up again), so what was checked is what is read.
enum ConfinedFile {
    /// Opens the file `url` names beneath one of `roots`; answers its
    /// descriptor (the caller closes it) and the URL libcurl reads it through.
    static func open(_ url: String, roots: [String]) throws(FetchError) -> (descriptor: Int32, url: String) {
        guard let path = path(of: url) else { throw .invalidURL }
        guard let root = roots.first(where: { beneath(path, $0) != nil }), let relative = beneath(path, root) else {
            throw .fileRefused(path)
        }
        let components = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.isEmpty, components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw .fileRefused(path)
        }
        // The root is the operator's folder, as named (links in its own path are theirs to make).
        var folder = openFolder(root)
        guard folder >= 0 else { throw .connectionFailed("cannot open \(root): \(explain(errno))") }
        for component in components.dropLast() {
            let next = openat(folder, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = errno
            close(folder)
            guard next >= 0 else { throw refusalOrFailure(failure, path) }
            folder = next
        }
        // O_NONBLOCK: a FIFO planted there opens at once (and is refused below) instead of blocking the thread.
        let file = openat(folder, String(components.last!), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        let failure = errno
        close(folder)
        guard file >= 0 else { throw refusalOrFailure(failure, path) }
        var info = stat()
        guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(file)
            throw .fileRefused(path)
        }
        #if canImport(Darwin)
        return (file, "file:///dev/fd/\(file)")
        #else
        return (file, "file:///proc/self/fd/\(file)")
        #endif
    }

    /// The part of `path` below `root` ("a/b.jpg"), or nil when `path` is not below it.
    static func beneath(_ path: String, _ root: String) -> Substring? {
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        return path.dropFirst(prefix.count)
    }

    /// The decoded path of a `file://` URL with no host (or `localhost`); nil otherwise.
    static func path(of url: String) -> String? {
        CurlGlobal.ensureInitialized()
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard url.withCString({ curl_url_set(handle, CURLUPART_URL, $0, 0) }) == CURLUE_OK else { return nil }
        var host: UnsafeMutablePointer<CChar>?
        if curl_url_get(handle, CURLUPART_HOST, &host, 0) == CURLUE_OK, let host {
            defer { curl_free(host) }
            let name = String(cString: host).lowercased()
            guard name.isEmpty || name == "localhost" else { return nil }
        }
        var part: UnsafeMutablePointer<CChar>?
        // CURLU_URLDECODE refuses a %00, so the path holds no NUL.
        guard curl_url_get(handle, CURLUPART_PATH, &part, UInt32(CURLU_URLDECODE)) == CURLUE_OK, let part else { return nil }
        defer { curl_free(part) }
        let path = String(cString: part)
        return path.hasPrefix("/") ? path : nil
    }

    /// A symbolic link met (ELOOP, or ENOTDIR for a link to a folder with O_DIRECTORY) is a
    /// refusal; a missing or unreadable file is a failure like an origin's.
    private static func refusalOrFailure(_ code: Int32, _ path: String) -> FetchError {
        code == ELOOP || code == ENOTDIR || code == EMLINK ? .fileRefused(path) : .connectionFailed("cannot open \(path): \(explain(code))")
    }

    private static func openFolder(_ path: String) -> Int32 {
        #if canImport(Darwin)
        Darwin.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #else
        Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #endif
    }

    private static func explain(_ code: Int32) -> String { String(cString: strerror(code)) }
}
