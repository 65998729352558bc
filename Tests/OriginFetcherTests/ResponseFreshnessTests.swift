import Testing

@testable import OriginFetcher

/// Freshness read from header values and reckoned from them, with no socket:
/// what each header means, and that no value an origin sends can trap.
@Suite struct ResponseFreshnessTests {
    static let now = HTTPDateTests.now
    static let receivedAt: Int64 = 1_800_000_000
    static let limit = ResponseFreshness.maxDeltaSeconds

    static func read(
        cacheControl: String? = nil, expires: String? = nil, date: String? = nil, age: String? = nil, retryAfter: String? = nil
    ) -> ResponseFreshness {
        ResponseFreshness(cacheControl: cacheControl, expires: expires, date: date, age: age, retryAfter: retryAfter, now: now)
    }

    @Test func cacheControlDirectives() {
        #expect(Self.read(cacheControl: "max-age=600").maxAge == 600)
        #expect(Self.read(cacheControl: "public, s-maxage=9999, max-age=60").maxAge == 60)
        #expect(Self.read(cacheControl: "s-maxage=9999").maxAge == nil)
        #expect(Self.read(cacheControl: "Max-Age=60").maxAge == 60)
        #expect(Self.read(cacheControl: "max-age=\"60\"").maxAge == 60)
        #expect(Self.read(cacheControl: "max-age = 60 ,private").maxAge == 60)
        #expect(Self.read(cacheControl: "max-age=60, max-age=60").maxAge == 60)
        // Two meanings: neither is taken.
        #expect(Self.read(cacheControl: "max-age=60, max-age=120").maxAge == nil)
        #expect(Self.read(cacheControl: "max-age=60, max-age=soon").maxAge == nil)
        #expect(Self.read(cacheControl: "no-store").noStore)
        #expect(Self.read(cacheControl: "max-age=60, NO-CACHE").noStore)
        // A no-cache naming fields is about those fields only (RFC 9111 §5.2.2.4).
        #expect(!Self.read(cacheControl: "no-cache=\"Set-Cookie, X-Token\", max-age=60").noStore)
        #expect(Self.read(cacheControl: "no-cache=\"Set-Cookie, X-Token\", max-age=60").maxAge == 60)
        // Commas and quotes inside a quoted string are not the list's.
        #expect(Self.read(cacheControl: "private=\"a, max-age=1\", max-age=5").maxAge == 5)
        #expect(Self.read(cacheControl: "x=\"a\\\"b, max-age=1\", max-age=5").maxAge == 5)
        // An element that does not follow the grammar is skipped, the others read.
        #expect(Self.read(cacheControl: "=5, max-age=7").maxAge == 7)
        #expect(Self.read(cacheControl: "max-age=7 garbage, no-store").maxAge == nil)
        #expect(Self.read(cacheControl: "max-age=7 garbage, no-store").noStore)
        // An unclosed quote swallows the rest.
        #expect(Self.read(cacheControl: "max-age=7, x=\"open, no-store").maxAge == 7)
        #expect(!Self.read(cacheControl: "max-age=7, x=\"open, no-store").noStore)
    }

    @Test(arguments: ["max-age", "max-age=", "max-age=-5", "max-age=5.5", "max-age=+5", "max-age=0x10", "max-age=５", "max-age=\"\""])
    func aMaxAgeThatIsNoNumberIsNone(_ value: String) {
        #expect(Self.read(cacheControl: value) == ResponseFreshness())
    }

    @Test func hugeNumbersAreTwoToTheThirtyFirstAsRFC9111Says() {
        let huge = String(repeating: "9", count: 900)
        #expect(Self.read(cacheControl: "max-age=" + huge).maxAge == Self.limit)
        #expect(Self.read(cacheControl: "max-age=2147483649").maxAge == Self.limit)
        #expect(Self.read(cacheControl: "max-age=2147483647").maxAge == 2_147_483_647)
        #expect(Self.read(age: huge).age == Self.limit)
        #expect(Self.read(retryAfter: huge).retryAfter == .seconds(Self.limit))
        #expect(Self.read(cacheControl: "max-age=9223372036854775808").freshFor(receivedAt: Self.receivedAt) == Self.limit)
        // An age that large leaves nothing of any max-age.
        #expect(Self.read(cacheControl: "max-age=" + huge, age: huge).freshFor(receivedAt: Self.receivedAt) == 0)
    }

    @Test(arguments: ["", "-1", "1.5", "5 ", "5, 6", "1e9", "soon", "٣"])
    func anAgeOrDelayThatIsNoNumberIsNone(_ value: String) {
        #expect(Self.read(age: value).age == nil)
        #expect(Self.read(retryAfter: value).retryAfter == nil)
    }

    @Test func freshForMaxAgeLessAge() {
        let freshness = Self.read(cacheControl: "max-age=600", expires: "Thu, 01 Jan 1970 00:00:00 GMT", age: "100")
        #expect(freshness.freshFor(receivedAt: Self.receivedAt) == 500)
        #expect(Self.read(cacheControl: "max-age=60", age: "100").freshFor(receivedAt: Self.receivedAt) == 0)
        #expect(Self.read(cacheControl: "max-age=0").freshFor(receivedAt: Self.receivedAt) == 0)
        #expect(Self.read(cacheControl: "no-store, max-age=600").freshFor(receivedAt: Self.receivedAt) == 0)
        #expect(Self.read(cacheControl: "public").freshFor(receivedAt: Self.receivedAt) == nil)
        #expect(Self.read().freshFor(receivedAt: Self.receivedAt) == nil)
    }

    @Test func freshForExpiresLessDate() {
        let date = "Mon, 01 Jan 2001 00:00:00 GMT"
        // Counted from the origin's own Date: its clock may be decades off.
        #expect(Self.read(expires: "Mon, 01 Jan 2001 01:00:00 GMT", date: date).freshFor(receivedAt: Self.receivedAt) == 3600)
        #expect(Self.read(expires: "Mon, 01 Jan 2001 01:00:00 GMT", date: date, age: "600").freshFor(receivedAt: Self.receivedAt) == 3000)
        #expect(Self.read(expires: "Sun, 31 Dec 2000 23:00:00 GMT", date: date).freshFor(receivedAt: Self.receivedAt) == 0)
        // No Date (or no valid one): counted from the receipt.
        let expires = "Fri, 15 Jan 2027 08:00:00 GMT"
        let at = Self.receivedAt
        #expect(Self.read(expires: expires).expires == at)
        #expect(Self.read(expires: expires).freshFor(receivedAt: at - 90) == 90)
        #expect(Self.read(expires: expires, date: "garbage").freshFor(receivedAt: at - 90) == 90)
        #expect(Self.read(expires: expires).freshFor(receivedAt: at + 90) == 0)
        // max-age wins over Expires.
        #expect(Self.read(cacheControl: "max-age=5", expires: expires).freshFor(receivedAt: at - 90) == 5)
    }

    @Test(arguments: ["0", "-1", "", "never", "Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 31 Feb 2100 00:00:00 GMT"])
    func anInvalidExpiresIsAlreadyStale(_ value: String) {
        let freshness = Self.read(expires: value, date: "Sat, 01 Jan 1900 00:00:00 GMT")
        #expect(freshness.expiresIsInvalid && freshness.expires == nil)
        #expect(freshness.freshFor(receivedAt: Self.receivedAt) == 0)
        #expect(Self.read(cacheControl: "max-age=60", expires: value).freshFor(receivedAt: Self.receivedAt) == 60)
    }

    @Test func retryAtFromSecondsOrFromTheResponsesDate() {
        #expect(Self.read(retryAfter: "7").retryAt(receivedAt: Self.receivedAt) == Self.receivedAt + 7)
        #expect(Self.read(retryAfter: "0").retryAt(receivedAt: Self.receivedAt) == Self.receivedAt)
        // An origin whose clock says 2001: two minutes after its Date is two minutes after receipt.
        let skewed = Self.read(date: "Mon, 01 Jan 2001 00:00:00 GMT", retryAfter: "Mon, 01 Jan 2001 00:02:00 GMT")
        #expect(skewed.retryAfter == .date(978_307_320))
        #expect(skewed.retryAt(receivedAt: Self.receivedAt) == Self.receivedAt + 120)
        // Before its Date: now.
        let past = Self.read(date: "Mon, 01 Jan 2001 00:00:00 GMT", retryAfter: "Sun, 31 Dec 2000 00:00:00 GMT")
        #expect(past.retryAt(receivedAt: Self.receivedAt) == Self.receivedAt)
        // No Date: the instant itself, never before receipt.
        let absolute = Self.read(retryAfter: "Wed, 15 Jan 2031 00:00:00 GMT")
        #expect(absolute.retryAt(receivedAt: Self.receivedAt) == 1_926_201_600)
        #expect(absolute.retryAt(receivedAt: 2_000_000_000) == 2_000_000_000)
        #expect(Self.read(retryAfter: "Sunday, 06-Nov-94 08:49:37 GMT").retryAfter == .date(HTTPDateTests.example))
        #expect(Self.read().retryAt(receivedAt: Self.receivedAt) == nil)
        #expect(Self.read(retryAfter: "tomorrow").retryAt(receivedAt: Self.receivedAt) == nil)
    }

    @Test func noSumTrapsWhateverTheValues() {
        let extremes: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
        for a in extremes {
            for b in extremes {
                let byDate = ResponseFreshness(expires: a, date: b, retryAfter: .date(a))
                _ = byDate.freshFor(receivedAt: b)
                _ = byDate.retryAt(receivedAt: a)
                _ = ResponseFreshness(expires: a, retryAfter: .seconds(Int(b))).freshFor(receivedAt: b)
                _ = ResponseFreshness(maxAge: Int(a), age: Int(b), retryAfter: .seconds(Int(a))).retryAt(receivedAt: b)
                #expect((ResponseFreshness(maxAge: Int(a), age: Int(b)).freshFor(receivedAt: 0) ?? -1) >= 0)
            }
        }
        #expect(ResponseFreshness(retryAfter: .seconds(7)).retryAt(receivedAt: .max) == nil)
        #expect(ResponseFreshness(date: .min, retryAfter: .date(.max)).retryAt(receivedAt: 0) == nil)
        #expect(ResponseFreshness(expires: .max, date: .min).freshFor(receivedAt: 0) == Self.limit)
    }
}
