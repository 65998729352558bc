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

    /// The headers of every page and fragment. `Accept-CH` asks Chromium to
    /// say the screen's pixel ratio on the requests that follow (`Sec-CH-DPR`),
    /// so pre-warm makes the thumbnails in the size that screen loads.
    static let page =
        security + [
            HTTPField("Cache-Control", "no-cache"), HTTPField("Vary", "Accept-Encoding"), HTTPField("Accept-CH", "Sec-CH-DPR"),
        ]
}
