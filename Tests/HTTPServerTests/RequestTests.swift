import HTTPServer
import HTTPTypes
import Testing

@Suite struct RequestTests {
    @Test func cookiesAreReadByNameInTheOrderSent() {
        let request = Request(path: "/", headers: [.cookie: "wf=0123456789abcdef; wf_admin=secret;wf=second ; other=x"])
        #expect(request.cookies(named: "wf") == ["0123456789abcdef", "second"])
        #expect(request.cookies(named: "wf_admin") == ["secret"])
        #expect(request.cookies(named: "w").isEmpty)
        #expect(Request(path: "/").cookies(named: "wf").isEmpty)
    }

    /// The pairs as RFC 6265 lets browsers and hostile clients send them:
    /// over several `Cookie` lines (HTTP/2 proxies split them), tabs, empty
    /// pairs, an empty value, a name alone, a name that only starts alike, and
    /// bytes that are not UTF-8 (repaired, never a crash).
    @Test func cookiesAreFoundInEveryShapeALineTakes() {
        var headers = HTTPFields()
        headers.append(HTTPField(name: .cookie, value: "\twf=first\t;;  ; wf ; wfx=no; wf="))
        headers.append(HTTPField(name: .cookie, value: "a=b;wf=  third  "))
        headers.append(HTTPField(name: .cookie, lenientValue: [0x77, 0x66, 0x3D, 0xFF, 0x61]))
        let request = Request(path: "/", headers: headers)
        #expect(request.cookies(named: "wf") == ["first", "", "  third", "\u{FFFD}a"])
        #expect(request.cookies(named: "a") == ["b"])
        #expect(request.cookies(named: "wfx") == ["no"])
        #expect(Request(path: "/", headers: [.cookie: ""]).cookies(named: "wf").isEmpty)
        #expect(Request(path: "/", headers: [.cookie: ";;;"]).cookies(named: "wf").isEmpty)
    }

    @Test func headersAreFoundWithoutRegardToCase() {
        let request = Request(path: "/", headers: [.acceptEncoding: "br, gzip;q=0.5"])
        #expect(request.header("accept-encoding") == "br, gzip;q=0.5")
        #expect(request.acceptsGzip)
        #expect(request.header("not a name") == nil)
    }

    /// `Accept-Encoding` as browsers, proxies and hostile clients write it.
    @Test func gzipIsTakenOnlyWhenTheClientAcceptsIt() {
        let cases: [(String, Bool)] = [
            ("gzip, deflate, br, zstd", true), ("GZIP", true), ("br;q=1.0, gzip;q=0.8", true), (" gzip ;q=0.001", true),
            ("*", true), ("identity, *;q=0.5", true), ("*;q=0, gzip", true), ("gzip;q=0, *", false), ("gzip;q=0", false),
            ("gzip;q=0.000", false), ("br, zstd", false), ("x-gzip", false), ("gzipx", false), ("", false), (",,;", false),
            ("gzip;q=", false), ("gzip;Q=0", false), ("identity", false),
        ]
        for (header, accepts) in cases {
            #expect(Request(path: "/", headers: [.acceptEncoding: header]).acceptsGzip == accepts, "\(header)")
        }
        #expect(!Request(path: "/").acceptsGzip)
    }
}
