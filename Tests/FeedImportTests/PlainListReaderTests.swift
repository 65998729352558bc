import FeedImport
import Testing

/// Plain lists: one address a line, as an operator writes them.
@Suite struct PlainListReaderTests {
    @Test func linesCommentsAndRelativePaths() throws {
        let text = """
            # my sources\r
            \r
            https://a.example/feed.xml\r
               feed://b.example/rss \t
            feeds/c.xml
            ../d.json
            /var/feeds/e.xml
            file:///var/feeds/f%20g.xml
              # an indented comment
            https://a.example/feed.xml
            ./photos/

            """
        let list = try readList(text, base: .file("/srv/lists/mine.txt"))
        #expect(list.kind == .plainList)
        #expect(
            list.sources == [
                ListedSource(location: "https://a.example/feed.xml", line: 3),
                ListedSource(location: "http://b.example/rss", line: 4),
                ListedSource(location: "/srv/lists/feeds/c.xml", line: 5),
                ListedSource(location: "/srv/d.json", line: 6),
                ListedSource(location: "/var/feeds/e.xml", line: 7),
                ListedSource(location: "/var/feeds/f g.xml", line: 8),
                ListedSource(location: "/srv/lists/photos", line: 11),
            ])
        #expect(list.problems.isEmpty)
    }

    @Test func listFromTheWebNamesNoFiles() throws {
        let text = """
            https://a.example/feed
            feeds/c.xml
            /var/feeds/e.xml
            file:///etc/passwd
            https://a.example/\u{7}bell
            https://a.example/feed  # a note after it
            javascript:alert(1)
            """
        let list = try readList(text, base: .url("https://lists.example/me/list.txt"))
        #expect(list.sources.map(\.location) == ["https://a.example/feed", "https://lists.example/me/feeds/c.xml"])
        #expect(list.problems.map(\.line) == [3, 4, 5, 6, 7])
        #expect(list.problems[0].reason.hasPrefix("a file, in a list fetched from the web"))
        #expect(list.problems[1].reason.hasPrefix("a file, in a list fetched from the web"))
        #expect(list.problems[2].reason == "a control character in the address: https://a.example/\\u{7}bell")
        #expect(list.problems[3].reason.hasPrefix("not a URL: it has white space in it"))
    }

    @Test func aLineThatIsNotUTF8IsSkipped() throws {
        // Past the first 4 KiB, which are what tells the kind.
        var bytes = Array(String(repeating: "# padding padding padding\n", count: 200).utf8)
        bytes += Array("https://a.example/\n".utf8) + [0x68, 0x74, 0x74, 0x70, 0xFF, 0x0A] + Array("https://b.example/\n".utf8)
        let list = try SourceList.read(.bytes(bytes), base: .file("/srv/l.txt"))
        #expect(list.sources.map(\.location) == ["https://a.example/", "https://b.example/"])
        #expect(list.problems == [ImportProblem(line: 202, reason: "a line that is not UTF-8")])
    }

    @Test func aByteOrderMarkAndWindowsLinesAreFine() throws {
        let list = try SourceList.read(.bytes([0xEF, 0xBB, 0xBF] + Array("https://a.example/\r\nhttps://b.example/".utf8)), base: .file("/l.txt"))
        #expect(list.sources.map(\.location) == ["https://a.example/", "https://b.example/"])
    }

    @Test func onlyCommentsIsAnEmptyList() throws {
        #expect(try readList("# everything is off for now\n# https://a.example/\n") == SourceList(kind: .plainList))
    }

    @Test func sourceLimitAndProblemCap() throws {
        let many = (1...150).map { "https://s.example/\($0)" }.joined(separator: "\n")
        let limited = try readList(many, sourceLimit: 100)
        #expect(limited.sources.count == 100)
        #expect(limited.problems == [ImportProblem(line: 101, reason: "more than 100 sources: this one and the rest are left out")])

        let broken = (1...300).map { "ftp://s.example/\($0)" }.joined(separator: "\n")
        let problems = try readList(broken).problems
        #expect(problems.count == 101)
        #expect(problems.last == ImportProblem(line: 101, reason: "more than 100 problems; the rest are not reported"))

        let brokenThenMany = try readList(broken + "\n" + many, sourceLimit: 100)
        #expect(brokenThenMany.problems.count == 102)
        #expect(brokenThenMany.problems.last == ImportProblem(line: 401, reason: "more than 100 sources: this one and the rest are left out"))
    }
}
