import FeedImport
import Foundation
import Testing

/// An OPML document around `body`, whose first line is line 5.
func opml(_ body: String) -> String {
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<opml version=\"2.0\">\n<head><title>Mine</title></head>\n<body>\n\(body)\n</body>\n</opml>\n"
}

/// The list `text` read as if fetched from `base`.
func readList(_ text: String, base: SourceListBase = .url("https://lists.example/me/list.opml"), sourceLimit: Int = SourceList.sourceLimit) throws(ImportError)
    -> SourceList
{
    try SourceList.read(.bytes(Array(text.utf8)), base: base, sourceLimit: sourceLimit)
}

/// What `SourceList.read` threw, or nil when it read the list.
func listError(_ text: String, base: SourceListBase = .url("https://lists.example/me/list.opml")) -> ImportError? {
    do {
        _ = try readList(text, base: base)
        return nil
    } catch {
        return error
    }
}

/// OPML lists: outlines, folders, addresses, and lists that cannot be used.
@Suite struct OPMLReaderTests {
    @Test func nestedFoldersAreFlattened() throws {
        let list = try readList(
            opml(
                """
                <outline text="Tech">
                  <outline text="A" xmlUrl="https://a.example/feed"/>
                  <outline text="Deeper">
                    <outline text="B" xmlUrl="https://b.example/feed"/>
                    <outline text="Deepest">
                      <outline text="C" xmlUrl="https://c.example/feed"/>
                      <outline text="A again" xmlUrl="https://a.example/feed"/>
                    </outline>
                    <outline text="D" xmlUrl="https://d.example/feed"/>
                  </outline>
                </outline>
                <outline text="E" xmlUrl="https://e.example/feed"/>
                """))
        #expect(list.kind == .opml)
        #expect(list.sources.map(\.location) == ["a", "b", "c", "d", "e"].map { "https://\($0).example/feed" })
        #expect(list.sources.map(\.title) == ["A", "B", "C", "D", "E"], "a repeated location keeps the first")
        #expect(list.sources.map(\.line) == [6, 8, 10, 13, 16])
        #expect(list.problems.isEmpty)
    }

    @Test func relativeXmlUrlResolvesAgainstTheList() throws {
        let outlines = opml(
            """
            <outline text="a" xmlUrl="feeds/a.xml" htmlUrl="/blog/"/>
            <outline text="b" xmlUrl="../b.xml"/>
            <outline text="c" xmlUrl="//cdn.example/c.xml"/>
            <outline text="d" xmlUrl="https://w.example/d" htmlUrl="https://w.example/"/>
            """)
        let web = try readList(outlines, base: .url("https://x.example/lists/l.opml"))
        #expect(
            web.sources.map(\.location) == [
                "https://x.example/lists/feeds/a.xml", "https://x.example/b.xml", "https://cdn.example/c.xml", "https://w.example/d",
            ])
        #expect(web.sources.map(\.site) == ["https://x.example/blog/", nil, nil, "https://w.example/"])
        #expect(web.problems.isEmpty)

        let file = try readList(outlines, base: .file("/srv/lists/l.opml"))
        #expect(file.sources.map(\.location) == ["/srv/lists/feeds/a.xml", "/srv/b.xml", "/cdn.example/c.xml", "https://w.example/d"], "//x is a path here")
        #expect(file.sources.map(\.isFile) == [true, true, true, false])
        #expect(file.sources.map(\.site) == [nil, nil, nil, "https://w.example/"], "a site is only ever a web page")
        #expect(file.problems.isEmpty)
    }

    @Test func brokenEntriesAreSkippedWithTheirLines() throws {
        let long = "https://long.example/" + String(repeating: "x", count: 5000)
        let list = try readList(
            opml(
                """
                <outline text="good 1" xmlUrl="https://good.example/1"/>
                <outline text="empty" xmlUrl=" "/>
                <outline text="js" xmlUrl="javascript:alert(1)"/>
                <outline text="no host" xmlUrl="https:///path"/>
                <outline text="long" xmlUrl="\(long)"/>
                <outline text="tab" xmlUrl="https://ctl.example/a&#9;b"/>
                <outline text="C1" xmlUrl="https://ctl.example/a&#x85;b"/>
                <outline text="mail" xmlUrl="mailto:me@example.com"/>
                <outline text="spaced" xmlUrl="https://good.example/feed  # my note"/>
                <outline text="good 2" xmlUrl="feed://good.example/2"/>
                <outline xmlUrl="feed:https://good.example/3"/>
                <outline text="bad feed" xmlUrl="feed:gopher://x.example/"/>
                <outline text="not a URL" xmlUrl="http://[::1/"/>
                """))
        #expect(list.sources.map(\.location) == ["https://good.example/1", "http://good.example/2", "https://good.example/3"])
        #expect(list.sources.map(\.title) == ["good 1", "good 2", nil])
        #expect(list.problems.map(\.line) == [6, 7, 8, 9, 10, 11, 12, 13, 16, 17])
        let reasons = list.problems.map(\.reason)
        #expect(reasons[0] == "an empty address")
        #expect(reasons[1] == "the scheme javascript: is not http, https or file: javascript:alert(1)")
        #expect(reasons[2] == "no host in the URL: https:///path")
        #expect(reasons[3].hasPrefix("an address longer than 4,096 bytes: https://long.example/xxx"))
        #expect(reasons[3].count < 200, "a problem shows the start of a long address only")
        #expect(reasons[4] == "a control character in the address: https://ctl.example/a\\u{9}b")
        #expect(reasons[5] == "a control character in the address: https://ctl.example/a\\u{85}b")
        #expect(reasons[6] == "the scheme mailto: is not http, https or file: mailto:me@example.com")
        #expect(reasons[7] == "not a URL: it has white space in it: https://good.example/feed  # my note")
        #expect(reasons[8] == "not a URL: feed: wraps no http(s) URL: feed:gopher://x.example/")
        #expect(reasons[9] == "not a URL: http://[::1/")
    }

    @Test func commentedOutlinesAreSkipped() throws {
        let list = try readList(
            opml(
                """
                <outline text="Old" isComment="true">
                  <outline text="old 1" xmlUrl="https://old.example/1"/>
                  <outline text="sub"><outline xmlUrl="https://old.example/2"/></outline>
                  <outline type="include" url="https://old.example/list.opml"/>
                </outline>
                <outline xmlUrl="https://kept.example/" isComment="false"/>
                <outline xmlUrl="https://gone.example/" ISCOMMENT="TRUE"/>
                <outline text="after" xmlUrl="https://after.example/"/>
                """))
        #expect(list.sources.map(\.location) == ["https://kept.example/", "https://after.example/"])
        #expect(list.problems.isEmpty, "a commented-out include is no problem")
    }

    @Test func xmlUrlAnyCaseAnyType() throws {
        let list = try readList(
            opml(
                """
                <outline type="link" xmlurl="https://a.example/feed" TITLE="A &lt;b&gt;bold&lt;/b&gt; &amp;amp; more" htmlurl="https://a.example/"/>
                <outline type="rss" XMLURL="https://b.example/feed" title="" text="  B\n text  "/>
                <outline type="atom" xmlUrl="https://c.example/feed"/>
                <outline xmlUrl="https://d.example/feed" htmlUrl="javascript:alert(1)" text="D"/>
                <outline type="link" url="https://page.example/" text="a link, not a feed"/>
                <outline text="folder only"/>
                """))
        #expect(list.sources.map(\.location) == ["a", "b", "c", "d"].map { "https://\($0).example/feed" })
        #expect(list.sources.map(\.title) == ["A bold & more", "B text", nil, "D"])
        #expect(list.sources.map(\.site) == ["https://a.example/", nil, nil, nil], "only an http(s) site is kept")
        #expect(list.problems.isEmpty)
    }

    @Test func oldVersionsReadAlike() throws {
        for version in ["1.0", "1.1", "2.0"] {
            let list = try readList(
                """
                <opml version="\(version)"><head/><body><outline title="T" xmlUrl="http://t.example/rss"/></body></opml>
                """)
            #expect(list.sources == [ListedSource(location: "http://t.example/rss", title: "T", line: 1)], "\(version)")
        }
        #expect(try readList("<opml version=\"2.0\"><head/></opml>") == SourceList(kind: .opml), "no body: no sources")
        #expect(
            try readList("<opml><head><outline xmlUrl=\"https://head.example/\"/></head><body/></opml>").sources.isEmpty,
            "an outline outside the body names nothing")
    }

    @Test func includeIsAProblem() throws {
        let list = try readList(
            opml(
                """
                <outline text="a" xmlUrl="https://a.example/"/>
                <outline type="include" text="Other" url="https://other.example/list.opml"/>
                <outline type="INCLUDE" text="No url"/>
                """))
        #expect(list.sources.map(\.location) == ["https://a.example/"])
        #expect(
            list.problems == [
                ImportProblem(line: 6, reason: "an included list is not followed (https://other.example/list.opml): name it as a list of its own"),
                ImportProblem(line: 7, reason: "an included list is not followed: name it as a list of its own"),
            ])
    }

    @Test func remoteListCannotNameFiles() throws {
        let outlines = opml(
            """
            <outline text="passwd" xmlUrl="file:///etc/passwd"/>
            <outline text="path" xmlUrl="/var/feeds/a.xml"/>
            <outline text="localhost" xmlUrl="file://localhost/var/feeds/b.xml"/>
            <outline text="web" xmlUrl="https://w.example/feed"/>
            """)
        let web = try readList(outlines, base: .url("https://lists.example/l.opml"))
        #expect(web.sources.map(\.location) == ["https://w.example/feed"])
        #expect(web.problems.map(\.line) == [5, 6, 7])
        #expect(web.problems.allSatisfy { $0.reason.hasPrefix("a file, in a list fetched from the web") })

        let file = try readList(outlines, base: .file("/srv/l.opml"))
        #expect(file.sources.map(\.location) == ["/etc/passwd", "/var/feeds/a.xml", "/var/feeds/b.xml", "https://w.example/feed"])
        #expect(file.problems.isEmpty)
        let remoteHost = try readList(opml("<outline xmlUrl=\"file://server/share/a.xml\"/>"), base: .file("/srv/l.opml"))
        #expect(remoteHost.problems.map(\.reason) == ["a file URL on another host (server): file://server/share/a.xml"])
    }

    @Test func notWellFormedListFailsWhole() throws {
        let whole = opml((0..<20).map { "<outline text=\"\($0)\" xmlUrl=\"https://s.example/\($0)\"/>" }.joined(separator: "\n"))
        #expect(try readList(whole).sources.count == 20)
        let lines = whole.split(separator: "\n", omittingEmptySubsequences: false)
        let cutBetweenOutlines = lines.prefix(15).joined(separator: "\n")
        #expect(listError(cutBetweenOutlines) == ImportError("the OPML list is not used: the document ends inside <body>: it is cut short", line: 15))
        let cutInsideATag = String(whole.prefix(whole.count / 2))
        #expect(listError(cutInsideATag)?.message.hasPrefix("the OPML list is not used: ") == true)

        let mismatched = whole.replacingOccurrences(of: "<outline text=\"7\"", with: "<outline><outline text=\"7\"")
        #expect(listError(mismatched)?.message.hasPrefix("the OPML list is not used: ") == true)
        let bareAmpersand = whole.replacingOccurrences(of: "https://s.example/9", with: "https://s.example/?a=1&b=9")
        #expect(
            listError(bareAmpersand) == ImportError("the OPML list is not used: an entity reference without its ';' (or an '&' that should be &amp;)", line: 14)
        )
        #expect(listError(opml("<outline text=\"1 < 2\" xmlUrl=\"https://a.example/\"/>"))?.line == 5)
        #expect(listError(whole + "<opml/>")?.message == "the OPML list is not used: more content after the end of the root element")
    }

    @Test func anotherRootIsAFeedNotAList() throws {
        #expect(try readList("<rss version=\"2.0\"><channel><title>T</title></channel></rss>") == SourceList(kind: .feed))
        #expect(try readList("{\"version\": \"https://jsonfeed.org/version/1.1\", \"items\": []}") == SourceList(kind: .feed))
    }

    @Test func listReadFromAFile() throws {
        let folder = NSTemporaryDirectory() + "opml-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/sub/../list.opml"
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        try Data(opml("<outline xmlUrl=\"feeds/a.xml\"/><outline xmlUrl=\"https://b.example/\"/>").utf8).write(to: URL(fileURLWithPath: path))
        let list = try SourceList.read(.file(path), base: .file(path))
        #expect(list.sources.map(\.location) == [folder + "/feeds/a.xml", "https://b.example/"])
        #expect(try SourceListKind.sniff(.file(path)) == .opml)
        #expect(throws: ImportError.self) { try SourceList.read(.file(folder + "/missing.opml"), base: .file(folder + "/missing.opml")) }
    }

    @Test func sourceLimitLeavesTheRestOut() throws {
        let list = try readList(opml((1...5).map { "<outline xmlUrl=\"https://s.example/\($0)\"/>" }.joined(separator: "\n")), sourceLimit: 3)
        #expect(list.sources.map(\.location) == (1...3).map { "https://s.example/\($0)" })
        #expect(list.problems == [ImportProblem(line: 8, reason: "more than 3 sources: this one and the rest are left out")])
    }
}
