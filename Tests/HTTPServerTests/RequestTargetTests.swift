import Testing
@testable import HTTPServer

@Suite struct RequestTargetTests {
    @Test func decodesPathAndQuery() throws {
        let target = try RequestTarget.parse("/a%20b/c?page=2&after=x%2By&q=hello+world&flag")
        #expect(target.path == "/a b/c")
        #expect(target.query == [QueryItem("page", "2"), QueryItem("after", "x+y"), QueryItem("q", "hello world"), QueryItem("flag", "")])
    }

    @Test func keepsRepeatedNames() throws {
        let target = try RequestTarget.parse("/?page=1&page=2")
        #expect(target.query.filter { $0.name == "page" }.map(\.value) == ["1", "2"])
    }

    @Test(arguments: [
        ("/static/../Package.swift", 400), ("/static/%2e%2e%2fPackage.swift", 400), ("/static/%2E%2E/x", 400),
        ("/./x", 400), ("/static/feed.js%00.png", 400), ("/?page=%00", 400), ("/%zz", 400), ("/%4", 400),
        ("/?a=%", 400), ("/%ff%fe", 400), ("/a\\..\\b", 400), ("*", 400), ("http://example.com/", 400),
        ("/\r?page=2", 400), ("/?p\rage=2", 400), ("/a b", 400), ("/a\tb", 400), ("/?q=\u{7F}", 400),
    ])
    func refusesBadTargets(raw: String, status: Int) {
        #expect(throws: RequestTarget.Problem.self) { try RequestTarget.parse(raw) }
        do { _ = try RequestTarget.parse(raw) } catch { #expect(error.status == status) }
    }

    @Test func refusesTooLongTargetsWith414() {
        let raw = "/?q=" + String(repeating: "a", count: 16 * 1024)
        do {
            _ = try RequestTarget.parse(raw, maxLength: 8192)
            Issue.record("a 16 KB target was accepted")
        } catch {
            #expect(error.status == 414)
        }
    }

    @Test func acceptsDotsInsideNames() throws {
        #expect(try RequestTarget.parse("/static/feed.min.js").path == "/static/feed.min.js")
        #expect(try RequestTarget.parse("/static/..hidden").path == "/static/..hidden")
    }
}
