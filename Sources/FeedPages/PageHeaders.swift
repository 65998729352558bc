import HTTPServer

/// The headers the feed's pages carry, in one place for the routes and the
/// renderings the page cache keeps (which are built before any route sees them).
package enum PageHeaders {
    /// What every HTML answer of the site carries: its content security policy and referrer policy.
    package static let security = [
        HTTPField(
            "Content-Security-Policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        ),
        HTTPField("Referrer-Policy", "same-origin"),
    ]

    /// The headers of every page and fragment (each adds its `ETag`). `Accept-CH` asks Chromium to
    /// say the screen's pixel ratio on the requests that follow (`Sec-CH-DPR`),
    /// so pre-warm makes the thumbnails in the size that screen loads; a hint
    /// asked for is named in `Vary` (RFC 8942), though the page's bytes do not
    /// change with it. `no-cache` with a validator: a revisit asks, and is
    /// answered 304 while the page is the same.
    static let page =
        security + [
            HTTPField("Cache-Control", "no-cache"), HTTPField("Vary", "Accept-Encoding, Sec-CH-DPR"), HTTPField("Accept-CH", "Sec-CH-DPR"),
        ]

    /// An HTML answer's header lines for a page, built once: a rendering
    /// adds its `ETag` (and its `Content-Encoding`) to a copy.
    static let pageFields = Response.htmlFields(page)

    /// What a page's 304 carries besides its `ETag` (RFC 9110, 15.4.5: the fields a 200 would have sent that describe caching).
    static let notModified = [
        HTTPField("Cache-Control", "no-cache"), HTTPField("Vary", "Accept-Encoding, Sec-CH-DPR"),
    ]
}
