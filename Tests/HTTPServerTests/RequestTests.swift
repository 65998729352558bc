import HTTPServer
import Testing

@Suite struct RequestTests {
    @Test func cookiesAreReadByNameInTheOrderSent() {
        let request = Request(path: "/", headers: [.cookie: "wf=0123456789abcdef; wf_admin=secret;wf=second ; other=x"])
        #expect(request.cookies(named: "wf") == ["0123456789abcdef", "second"])
        #expect(request.cookies(named: "wf_admin") == ["secret"])
        #expect(request.cookies(named: "w").isEmpty)
        #expect(Request(path: "/").cookies(named: "wf").isEmpty)
    }

    @Test func headersAreFoundWithoutRegardToCase() {
        let request = Request(path: "/", headers: [.acceptEncoding: "br, gzip;q=0.5"])
        #expect(request.header("accept-encoding") == "br, gzip;q=0.5")
        #expect(request.acceptsGzip)
        #expect(request.header("not a name") == nil)
    }
}
