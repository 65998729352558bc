/// Why a fetch gave no body, or a download no file. Every failure of an origin ends in one of these;
/// none of them is a crash or a hang.
public enum FetchError: Error, Sendable, Equatable, Hashable {
    /// The string is not a URL libcurl can parse.
    case invalidURL
    /// The URL's scheme (or a redirect's) is not one the fetch allows: only
    /// `http` and `https`, and `file` when the limits allow it.
    case schemeNotAllowed
    /// The connect timeout, the total timeout or the low-speed limit cut the fetch.
    case timedOut
    /// The body is larger than `FetchLimits.maxBodyBytes`.
    case tooLarge
    /// More redirects than `FetchLimits.maxRedirects`, or a redirect loop.
    case tooManyRedirects
    /// The origin answered with a status outside 2xx.
    case httpStatus(Int)
    /// The origin could not be reached, reset or closed the connection, or sent
    /// less than it announced; the text is libcurl's own explanation.
    case connectionFailed(String)
    /// The origin answered something that is not HTTP; the text is libcurl's explanation.
    case invalidResponse(String)
    /// A request header's name is not an HTTP token, or a name or value holds
    /// CR, LF or NUL (which would let it smuggle further headers in).
    case invalidHeader
    /// The body could not be written to the download's file (opening, writing
    /// or renaming it failed); the text says which and why.
    case writeFailed(String)
    /// The origin was busy: the fetch waited longer than the fetcher's bound for
    /// one of its connections to that host and never started; or this server
    /// was: the body found no room in its ``BodyAllowance`` in time. Not the
    /// origin's failure: asking again later may well succeed.
    case busy
    /// The caller's task was cancelled, or the fetcher was shut down.
    case cancelled
    /// The fetch's `AddressPolicy` refused the address the named host (the
    /// first URL's or a redirect's) resolved to: nothing was sent to it.
    case addressRefused(String)
    /// The `file://` URL names a file outside `FetchLimits.fileRoots`, or
    /// reaches it through a symbolic link (or names something that is not a
    /// regular file): the path, as the URL named it. Nothing was read.
    case fileRefused(String)
}
