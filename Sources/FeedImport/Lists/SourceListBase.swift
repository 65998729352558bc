/// Where a list was read from. It says what the list's relative entries are
/// relative to, and whether the list may name files on this machine: a list
/// from the web never may, so a stranger's OPML cannot make the server read
/// its own disk.
public enum SourceListBase: Sendable, Equatable {
    /// A list fetched from this absolute http(s) URL: its relative entries
    /// are URLs relative to it, and a `file:` URL or an absolute path in it is
    /// a problem.
    case url(String)
    /// A list read from the file at this absolute path: a relative entry is
    /// a path beside the file, and it may name files, folders and http(s)
    /// URLs alike.
    case file(String)

    /// The URL relative web addresses resolve against, when the list has one.
    var webURL: String? {
        if case .url(let url) = self { return url }
        return nil
    }
}
