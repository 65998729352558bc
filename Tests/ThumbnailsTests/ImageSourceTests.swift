import Testing

@testable import Thumbnails
@testable import WarmfeedCore

/// Where an item's original comes from decides what it may reach (`ImageSource.Original.Kind`),
/// and a refusal is logged once per host (`RefusalLog`).
@Suite struct ImageSourceTests {
    func item(_ image: String?) -> FeedItem {
        FeedItem(guid: "g", title: "t", summary: "", imageURL: image, imageWidth: 800, imageHeight: 600, published: 1)
    }

    @Test func eachURLIsTrustedAsFarAsWhereItCameFrom() {
        let source = ImageSource(demoBase: { "http://127.0.0.1:9000" })
        #expect(source.original(of: item("demo:7.jpg")) == .init(url: "http://127.0.0.1:9000/originals/7.jpg?w=800&h=600", kind: .demo))
        #expect(source.original(of: item("https://img.example/a.jpg")) == .init(url: "https://img.example/a.jpg", kind: .feed))
        #expect(source.original(of: item("HTTP://127.0.0.1/a.jpg"))?.kind == .feed, "a feed's URL on loopback is still a feed's")
        #expect(source.original(of: item("file:///srv/pictures/a.jpg")) == .init(url: "file:///srv/pictures/a.jpg", kind: .file))
        for nothing in [nil, "ftp://x/a.jpg", "data:image/png;base64,AA", "javascript:alert(1)"] {
            #expect(source.original(of: item(nothing)) == nil)
        }
        // No demo origin listening yet: demo pictures are not fetched at all.
        #expect(ImageSource().original(of: item("demo:7.jpg")) == nil)
    }

    @Test func aRefusedHostIsToldOnceAndTheMemoryStaysBounded() {
        var log = RefusalLog()
        func told(_ host: String) -> Bool { log.first(host) }
        #expect(told("127.0.0.1"))
        #expect(!told("127.0.0.1"))
        #expect(told("localhost"))
        var fresh = 0
        for index in 0..<(RefusalLog.capacity - 2) where told("host-\(index)") { fresh += 1 }
        #expect(fresh == RefusalLog.capacity - 2)
        // Full: everything is forgotten, and told once more.
        #expect(told("another"))
        #expect(told("127.0.0.1"))
        #expect(!told("127.0.0.1"))
    }
}
