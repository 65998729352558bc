/// What a response's headers said about how long it stays current and when
/// its origin wants to be asked again: `Cache-Control`, `Age`, `Expires`,
/// `Date` and `Retry-After`, read (see ``OriginFetcher/download(_:to:conditional:headers:limits:passing:)``).
///
/// A poller asks no sooner than an origin's copy goes stale, and no sooner
/// than it was told to come back; these are the facts it decides from. A value
/// that is garbage, out of range or given twice with two meanings is nil (an
/// `Expires` of that kind is ``expiresIsInvalid``): a hostile origin can make
/// the fetcher ignore what it says, never trap or mislead it. Instants are
/// seconds since 1970 (UTC), as the origin's clock gave them.
public struct ResponseFreshness: Sendable, Equatable {
    /// When the origin wants to be asked again (RFC 9110 §10.2.3).
    public enum RetryAfter: Sendable, Equatable {
        /// This many seconds after the response was received.
        case seconds(Int)
        /// At this instant of the origin's clock, in seconds since 1970.
        case date(Int64)
    }

    /// The greatest number of seconds a delay or an age is taken to be, 2^31:
    /// RFC 9111 §1.2.2 says a larger one, or a sum that overflows, is this.
    public static let maxDeltaSeconds = 2_147_483_648

    /// `Cache-Control: max-age`, in seconds (`s-maxage` is for shared caches
    /// and is ignored). Nil when absent, or when it is not a number, or when
    /// the header gives two different values.
    public var maxAge: Int?
    /// Whether `Cache-Control` said `no-store` or `no-cache` (unqualified):
    /// the response may not be taken as current without asking again, so it
    /// is fresh for no time at all, whatever else it says.
    public var noStore: Bool
    /// `Age`: the seconds the response already spent in caches on its way.
    public var age: Int?
    /// `Expires`, when it is an HTTP-date.
    public var expires: Int64?
    /// Whether `Expires` was sent but is not an HTTP-date (`0`, `-1`, garbage,
    /// two of them): RFC 9111 §5.3 reads it as a time in the past, so the
    /// response is already stale (unless `max-age` says otherwise).
    public var expiresIsInvalid: Bool
    /// `Date`: when the origin made the response, by its own clock.
    public var date: Int64?
    /// `Retry-After`: a delay or an instant.
    public var retryAfter: RetryAfter?

    /// Freshness facts as given; the fetcher makes these from headers, tests and callers may too.
    public init(
        maxAge: Int? = nil, noStore: Bool = false, age: Int? = nil, expires: Int64? = nil, expiresIsInvalid: Bool = false,
        date: Int64? = nil, retryAfter: RetryAfter? = nil
    ) {
        self.maxAge = maxAge
        self.noStore = noStore
        self.age = age
        self.expires = expires
        self.expiresIsInvalid = expiresIsInvalid
        self.date = date
        self.retryAfter = retryAfter
    }

    /// For how many more seconds, from its receipt, the response stays fresh
    /// (RFC 9111 §4.2.1): `max-age` less `Age` when there is a `max-age`, else
    /// `Expires` less `Date` less `Age` (with no `Date`, `Expires` less
    /// `receivedAt`); 0 when it is already stale, under `no-store` or
    /// `no-cache`, or with an invalid `Expires`; at most ``maxDeltaSeconds``.
    /// Nil when the response said nothing about it.
    ///
    /// `Expires` is measured against the origin's own `Date` when there is
    /// one, so a wrong clock on either side does not matter. The apparent age
    /// (our receipt less the origin's `Date`) is left out for the same reason.
    ///
    /// - Parameter receivedAt: when the response was received, in seconds
    ///   since 1970 by the caller's clock.
    public func freshFor(receivedAt: Int64) -> Int? {
        if noStore { return 0 }
        let age = Int64(self.age ?? 0)
        if let maxAge { return Self.seconds(Self.difference(Int64(maxAge), age)) }
        if expiresIsInvalid { return 0 }
        guard let expires else { return nil }
        guard let date else { return Self.seconds(Self.difference(expires, receivedAt)) }
        return Self.seconds(Self.difference(Self.difference(expires, date), age))
    }

    /// When the origin may be asked again, in seconds since 1970 by the
    /// caller's clock (RFC 9110 §10.2.3): a delay counted from `receivedAt`;
    /// an instant as far after `receivedAt` as it is after the response's own
    /// `Date` (with no `Date`, the instant itself), so a wrong origin clock
    /// does not matter. Never before `receivedAt`. Nil when the response said
    /// nothing, or the sum does not fit.
    public func retryAt(receivedAt: Int64) -> Int64? {
        guard let retryAfter else { return nil }
        let at: Int64?
        switch retryAfter {
        case .seconds(let delay):
            at = Self.sum(receivedAt, Int64(delay))
        case .date(let instant):
            if let date {
                let (delay, overflow) = instant.subtractingReportingOverflow(date)
                at = overflow ? nil : Self.sum(receivedAt, delay)
            } else {
                at = instant
            }
        }
        return at.map { max($0, receivedAt) }
    }

    /// `a - b`, or the nearest end of the range when it does not fit.
    private static func difference(_ a: Int64, _ b: Int64) -> Int64 {
        let (value, overflow) = a.subtractingReportingOverflow(b)
        guard overflow else { return value }
        return b < 0 ? .max : .min
    }

    /// `a + b`, or nil when it does not fit.
    private static func sum(_ a: Int64, _ b: Int64) -> Int64? {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? nil : value
    }

    /// `value` as seconds of freshness: never negative, at most ``maxDeltaSeconds``.
    private static func seconds(_ value: Int64) -> Int {
        Int(min(max(value, 0), Int64(maxDeltaSeconds)))
    }
}
