import FeedImport
import Foundation
import Testing

/// Lists written to hurt: each ends in bounded work with a problem or an
/// error, never a crash, an expansion or a read of this machine's files.
@Suite struct SourceListHostileTests {
    @Test func billionLaughsExpandNothing() throws {
        var doctype = "<?xml version=\"1.0\"?>\n<!DOCTYPE opml [\n<!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            doctype += "<!ENTITY lol\(level) \"\(String(repeating: "&lol\(level == 1 ? "" : String(level - 1));", count: 10))\">\n"
        }
        doctype += "]>\n"
        let laughing = doctype + "<opml><body><outline text=\"&lol9;\" xmlUrl=\"https://a.example/&lol9;\"/></body></opml>\n"
        let error = try #require(listError(laughing))
        #expect(error.message.contains("lol9"))
        #expect(error.line == 14)
        // Declared and never used, the entities cost nothing.
        let quiet = try readList(doctype + "<opml><body><outline text=\"fine\" xmlUrl=\"https://a.example/\"/></body></opml>\n")
        #expect(quiet.sources.map(\.title) == ["fine"])
    }

    @Test func externalEntitiesAreNeverRead() throws {
        let list = """
            <?xml version="1.0"?>
            <!DOCTYPE opml [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <opml><body><outline text="&xxe;" xmlUrl="https://a.example/"/></body></opml>
            """
        let error = try #require(listError(list, base: .file("/srv/l.opml")))
        #expect(!error.description.contains("root:"))
    }

    @Test func aHundredThousandOutlinesStopAtTheLimit() throws {
        let outlines = (0..<100_000).map { "<outline xmlUrl=\"https://f.example/\($0)\"/>" }.joined(separator: "\n")
        let list = try readList(opml(outlines))
        #expect(list.sources.count == SourceList.sourceLimit)
        #expect(list.sources.last?.location == "https://f.example/9999")
        #expect(list.problems == [ImportProblem(line: 10_005, reason: "more than 10000 sources: this one and the rest are left out")])
    }

    @Test func aHundredThousandBrokenOutlinesAreCappedProblems() throws {
        let outlines = (0..<100_000).map { "<outline xmlUrl=\"javascript:\($0)\"/>" }.joined(separator: "\n")
        let list = try readList(opml(outlines))
        #expect(list.sources.isEmpty)
        #expect(list.problems.count == 101)
    }

    @Test func tenThousandLevelsDeepIsRefused() throws {
        let deep =
            String(repeating: "<outline text=\"f\">", count: 10_000) + "<outline xmlUrl=\"https://deep.example/\"/>"
            + String(repeating: "</outline>", count: 10_000)
        let error = try #require(listError(opml(deep)))
        #expect(error.message == "the OPML list is not used: elements nested more than 256 deep: nothing after this is read")
    }

    @Test func outlinesBelowThirtyTwoFoldersAreLeftOut() throws {
        var body = ""
        for level in 1...39 {
            body += "<outline text=\"folder \(level)\">\n"
            if level == 2 { body += "<outline text=\"shallow\" xmlUrl=\"https://shallow.example/\"/>\n" }
            if level == 31 { body += "<outline text=\"at 32\" xmlUrl=\"https://thirty-two.example/\"/>\n" }
            if level == 39 { body += "<outline text=\"at 40\" xmlUrl=\"https://forty.example/\"/>\n" }
        }
        body += String(repeating: "</outline>\n", count: 39) + "<outline text=\"after\" xmlUrl=\"https://after.example/\"/>"
        let list = try readList(opml(body))
        #expect(list.sources.map(\.title) == ["shallow", "at 32", "after"])
        #expect(list.problems == [ImportProblem(line: 39, reason: "an outline nested more than 32 deep: it and the outlines inside it are left out")])
    }

    @Test func aListOverEightMebibytesIsNotRead() throws {
        let padding = "<!--" + String(repeating: "x", count: SourceList.documentLimit) + "-->"
        let huge = opml("<outline xmlUrl=\"https://a.example/\"/>" + padding)
        #expect(listError(huge) == ImportError("a list larger than 8 MiB: it is not read"))
        let plain = "https://a.example/\n" + String(repeating: "# a comment line of padding\n", count: SourceList.documentLimit / 28 + 1)
        #expect(listError(plain) == ImportError("a list larger than 8 MiB: it is not read"))
    }

    @Test func aHugeTitleIsCut() throws {
        let title = String(repeating: "word ", count: 1_000_000)
        let list = try readList(opml("<outline text=\"\(title)\" xmlUrl=\"https://a.example/\"/>"))
        #expect(list.sources.first?.title?.count == 1000)
    }
}
