/// The limits one fetch runs under, so that no origin can hold a worker or the
/// server's memory for longer or more than the caller allowed.
public struct FetchLimits: Sendable, Hashable {
    /// How long the TCP (and TLS) connect may take.
    public var connectTimeout: Duration
    /// How long the whole transfer may take once it has a connection, redirects
    /// included (the wait for a connection is bounded apart, by the fetcher).
    public var totalTimeout: Duration
    /// The largest body accepted, in bytes. A larger declared `Content-Length`
    /// is refused before the body is read; a body without a length is cut as
    /// soon as it goes past the limit.
    public var maxBodyBytes: Int
    /// How many redirects are followed before the fetch fails with
    /// `FetchError.tooManyRedirects`.
    public var maxRedirects: Int
    /// The slowest transfer rate, in bytes a second, tolerated for `lowSpeedTime`:
    /// an origin that drips bytes is cut instead of holding a connection until
    /// the total timeout. It also counts while waiting for the first byte, so
    /// an origin silent for `lowSpeedTime` is cut too. 0 turns the check off.
    public var lowSpeedLimit: Int
    /// How long the rate may stay under `lowSpeedLimit` (whole seconds, at least one).
    public var lowSpeedTime: Duration
    /// Whether `file://` URLs may be fetched (items imported from a local folder).
    /// Redirects never lead to `file://`, whatever this says.
    public var allowFileScheme: Bool
    /// Where the fetch may connect (see `AddressPolicy`). Anywhere by default:
    /// a caller fetching URLs that someone else wrote says `.publicOnly`.
    public var addressPolicy: AddressPolicy
    /// The folders `file://` URLs may name files in (absolute paths, without
    /// symbolic links), when `allowFileScheme` holds; nil for anywhere. A file
    /// is opened one component at a time beneath its folder, following no
    /// symbolic link, and must be a regular file; anything else ends with
    /// `FetchError.fileRefused`.
    public var fileRoots: [String]?

    /// Limits suited to fetching image originals from a remote origin.
    public init(
        connectTimeout: Duration = .seconds(3),
        totalTimeout: Duration = .seconds(10),
        maxBodyBytes: Int = 32 << 20,
        maxRedirects: Int = 3,
        lowSpeedLimit: Int = 1024,
        lowSpeedTime: Duration = .seconds(3),
        allowFileScheme: Bool = false,
        addressPolicy: AddressPolicy = .anywhere,
        fileRoots: [String]? = nil
    ) {
        self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout
        self.maxBodyBytes = maxBodyBytes
        self.maxRedirects = maxRedirects
        self.lowSpeedLimit = lowSpeedLimit
        self.lowSpeedTime = lowSpeedTime
        self.allowFileScheme = allowFileScheme
        self.addressPolicy = addressPolicy
        self.fileRoots = fileRoots
    }
}
