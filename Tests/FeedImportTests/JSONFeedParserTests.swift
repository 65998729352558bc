import Foundation
import Testing

@testable import FeedImport

@Suite struct JSONFeedParserTests {
    @Test func readsAJSONFeed11WithEveryField() throws {
        let text = """
            {
              "version": "https://jsonfeed.org/version/1.1",
              "title": "My Feed",
              "home_page_url": "https://example.org/",
              "feed_url": "https://example.org/feed.json",
              "authors": [{"name": "A"}],
              "items": [
                {
                  "id": "1", "title": "First", "summary": "Short", "content_text": "Long text",
                  "content_html": "<p>Hi</p>", "url": "/one", "external_url": "https://other.example/",
                  "image": "img/one.jpg", "banner_image": "banner.png",
                  "date_published": "2024-01-02T03:04:05Z", "date_modified": "2024-02-03T04:05:06Z",
                  "tags": ["a", 1], "_ext": {"x": true},
                  "attachments": [
                    {"url": "a.mp3", "mime_type": "audio/mpeg"},
                    {"url": "photo.webp", "mime_type": "image/webp", "size_in_bytes": 10},
                    {"url": "no-type.jpg"}
                  ]
                }
              ]
            }
            """
        let parsed = try parseJSONFeed(text)
        #expect(parsed.metadata == FeedMetadata(format: .jsonFeed, title: "My Feed", link: "https://example.org/"))
        #expect(parsed.problems == [])
        #expect(parsed.entries == [
            RawEntry(
                line: 8, id: "1", title: "First", summary: "Short", contentHTML: "<p>Hi</p>", link: "/one",
                baseURL: "https://example.org/",
                images: [
                    ImageCandidate(kind: .own, url: "img/one.jpg"),
                    ImageCandidate(kind: .own, url: "banner.png"),
                    ImageCandidate(kind: .enclosure, url: "photo.webp", mimeType: "image/webp"),
                ],
                published: "2024-01-02T03:04:05Z", updated: "2024-02-03T04:05:06Z"),
        ])
    }

    @Test func readsAJSONFeed10WithFallbacks() throws {
        let text = """
            {"version": "https://jsonfeed.org/version/1", "feed_url": "https://example.net/feed.json",
             "author": {"name": "A"},
             "items": [{"id": "a", "content_text": "Only text", "external_url": "https://elsewhere.example/"}]}
            """
        let parsed = try parseJSONFeed(text)
        #expect(parsed.metadata == FeedMetadata(format: .jsonFeed, title: nil, link: nil))
        #expect(parsed.entries == [
            RawEntry(
                line: 3, id: "a", summary: "Only text", link: "https://elsewhere.example/",
                baseURL: "https://example.net/feed.json"),
        ])
    }

    @Test func takesNumberIdsAsTheirDecimalText() throws {
        let parsed = try parseJSONFeed(jsonFeed(items: [
            #"{"id": 12}"#, #"{"id": 12345678901234567890}"#, #"{"id": -3}"#, #"{"id": "007"}"#, #"{"id": null}"#,
        ]))
        #expect(parsed.entries.map(\.id) == ["12", "12345678901234567890", "-3", "007", nil])
        #expect(parsed.problems == [])
    }

    @Test func givesEachEntryTheLineItStartsOn() throws {
        let parsed = try parseJSONFeed(jsonFeed(items: [#"{"id": "a"}"#, "\n\n" + #"{"id": "b", "title": "x\ny"}"#, #"{"id": "c"}"#]))
        #expect(parsed.entries.map(\.line) == [3, 6, 7])
    }

    @Test(arguments: [
        (#""title": 5"#, #"item 2: "title" is a number, not a string"#),
        (#""id": {"a": 1}"#, #"item 2: "id" is an object, not a string"#),
        (#""id": true"#, #"item 2: "id" is a boolean, not a string"#),
        (#""image": ["a.jpg"]"#, #"item 2: "image" is an array, not a string"#),
        (#""banner_image": 1"#, #"item 2: "banner_image" is a number, not a string"#),
        (#""summary": false"#, #"item 2: "summary" is a boolean, not a string"#),
        (#""content_text": []"#, #"item 2: "content_text" is an array, not a string"#),
        (#""content_html": {}"#, #"item 2: "content_html" is an object, not a string"#),
        (#""url": 3"#, #"item 2: "url" is a number, not a string"#),
        (#""external_url": 3"#, #"item 2: "external_url" is a number, not a string"#),
        (#""date_published": 1700000000"#, #"item 2: "date_published" is a number, not a string"#),
        (#""date_modified": []"#, #"item 2: "date_modified" is an array, not a string"#),
        (#""attachments": {"url": "a.jpg"}"#, #"item 2: "attachments" is an object, not an array"#),
        (#""attachments": ["a.jpg"]"#, #"item 2: "attachments[0]" is a string, not an object"#),
        (#""attachments": [{"url": "a.jpg", "mime_type": "image/jpeg"}, {"url": 1}]"#,
            #"item 2: "attachments[1].url" is a number, not a string"#),
        (#""attachments": [{"url": "a.jpg", "mime_type": 7}]"#,
            #"item 2: "attachments[0].mime_type" is a number, not a string"#),
    ])
    func skipsAnItemWithAFieldOfTheWrongType(field: String, reason: String) throws {
        let parsed = try parseJSONFeed(jsonFeed(items: [#"{"id": "1"}"#, #"{"n": 2, \#(field)}"#, #"{"id": "3"}"#]))
        #expect(parsed.entries.map(\.id) == ["1", "3"])
        #expect(parsed.problems == [ImportProblem(line: 4, reason: reason)])
    }

    @Test func skipsItemsThatAreNotObjects() throws {
        let parsed = try parseJSONFeed(jsonFeed(items: ["1", #""x""#, "null", "[]", "true", #"{"id": "ok"}"#]))
        #expect(parsed.entries.map(\.id) == ["ok"])
        #expect(parsed.problems.map(\.reason) == [
            "item 1 is a number, not an object", "item 2 is a string, not an object", "item 3 is null, not an object",
            "item 4 is an array, not an object", "item 5 is a boolean, not an object",
        ])
        #expect(parsed.problems.map(\.line) == [3, 4, 5, 6, 7])
    }

    @Test func skipsAnItemThatIsNotValidJSONInside() throws {
        let parsed = try parseJSONFeed(jsonFeed(items: [#"{"id": "1", "title": tru}"#, #"{"id": "2"}"#]))
        #expect(parsed.entries.map(\.id) == ["2"])
        #expect(parsed.problems == [ImportProblem(line: 3, reason: "item 1 is not valid JSON")])
    }

    @Test(arguments: [
        ("", "empty source"),
        (" \n\t ", "empty source"),
        ("<!DOCTYPE html><html><body>Not found</body></html>", "an HTML or XML document, not a JSON Feed"),
        ("<?xml version=\"1.0\"?><rss/>", "an HTML or XML document, not a JSON Feed"),
        ("[{\"version\": \"https://jsonfeed.org/version/1.1\"}]", "not a JSON Feed: the top level is an array, not an object"),
        ("\"feed\"", "not a JSON Feed: the top level is a string, not an object"),
        ("42", "not a JSON Feed: the top level is a number, not an object"),
        ("Hello", "not JSON: the document starts with 'H'"),
        (#"{"title": "x", "items": []}"#, "not a JSON Feed: no version"),
        (#"{"version": "https://example.com/feed", "items": []}"#, "not a JSON Feed: the version is not https://jsonfeed.org/version/…"),
        (#"{"version": 1.1, "items": []}"#, "not a JSON Feed: the version is not https://jsonfeed.org/version/…"),
        (#"{"version": "https://jsonfeed.org/version/1.1", "title": "x"}"#, "not a JSON Feed: no \"items\" array"),
        (#"{"version": "https://jsonfeed.org/version/1.1", "items": {"id": 1}}"#, "\"items\" is not an array"),
        (#"{"version": "https://jsonfeed.org/version/1.1", "items": null}"#, "\"items\" is not an array"),
        (#"{"version": "https://jsonfeed.org/version/1.1", "title": "cut"#, "truncated: the document ends before \"items\""),
        (#"{"version": "https://jsonfeed.org/version/1.1" "items": []}"#, "not valid JSON: expected ',' or '}' after \"version\""),
    ])
    func refusesAWholeDocumentThatIsNotAJSONFeed(text: String, message: String) {
        #expect(jsonFeedImportError(text)?.message == message)
    }

    @Test func keepsTheItemsBeforeACut() throws {
        let text = jsonFeed(items: [#"{"id": "1"}"#, #"{"id": "2"}"#, #"{"id": "3", "title": "never fin"#])
        let cut = String(text.prefix(upTo: text.range(of: "never fin")!.upperBound))
        let parsed = try parseJSONFeed(cut)
        #expect(parsed.entries.map(\.id) == ["1", "2"])
        #expect(parsed.problems == [ImportProblem(line: 5, reason: "truncated: the document ends inside item 3")])
    }

    @Test func survivesACutAtEveryByte() throws {
        let full = Array(jsonFeed(items: [#"{"id": "1", "title": "a\"b"}"#, #"{"id": 2, "tags": [1, {"x": "]"}]}"#]).utf8)
        let all = try parseJSONFeed(bytes: full).entries
        for length in 0..<full.count {
            do {
                let parsed = try parseJSONFeed(bytes: Array(full[..<length]))
                #expect(all.starts(with: parsed.entries), "cut at \(length)")
                #expect(parsed.problems.count == 1, "cut at \(length)")
            } catch let error as ImportError {
                #expect(!error.message.isEmpty)
            }
        }
    }

    @Test func readsTheVersionWhereverItIs() throws {
        let parsed = try parseJSONFeed(#"{"items": [{"id": "1"}], "title": "Late", "version": "https://jsonfeed.org/version/1"}"#)
        #expect(parsed.entries.map(\.id) == ["1"])
        #expect(parsed.metadata.title == "Late")
    }

    @Test func replacesBytesThatAreNotUTF8() throws {
        var bytes = Array(jsonFeed(items: [#"{"id": "1", "title": "caf@"}"#, #"{"id": "2", "title": "fine"}"#]).utf8)
        bytes[bytes.firstIndex(of: UInt8(ascii: "@"))!] = 0xFF
        let parsed = try parseJSONFeed(bytes: bytes)
        #expect(parsed.entries.map(\.title) == ["caf\u{FFFD}", "fine"])
        #expect(parsed.problems == [ImportProblem(line: 3, reason: "item 1: bytes that are not UTF-8 replaced with U+FFFD")])
    }

    @Test func replacesBytesThatAreNotUTF8InTheFeedTitle() throws {
        var bytes = Array(#"{"version": "https://jsonfeed.org/version/1.1", "title": "caf@", "items": []}"#.utf8)
        bytes[bytes.firstIndex(of: UInt8(ascii: "@"))!] = 0xC3
        let parsed = try parseJSONFeed(bytes: bytes)
        #expect(parsed.metadata.title == "caf\u{FFFD}")
        #expect(parsed.problems == [
            ImportProblem(line: 1, reason: "the feed's \"title\": bytes that are not UTF-8 replaced with U+FFFD"),
        ])
    }

    @Test func skipsAnItemWithALoneSurrogate() throws {
        let parsed = try parseJSONFeed(jsonFeed(items: [#"{"id": "1", "title": "\ud83d"}"#, #"{"id": "2"}"#]))
        #expect(parsed.entries.map(\.id) == ["2"])
        #expect(parsed.problems == [ImportProblem(line: 3, reason: "item 1 is not valid JSON")])
    }

    @Test func ignoresAFeedTitleOfTheWrongType() throws {
        let parsed = try parseJSONFeed(#"{"version": "https://jsonfeed.org/version/1.1", "title": 3, "items": []}"#)
        #expect(parsed.metadata.title == nil)
        #expect(parsed.problems == [ImportProblem(line: 1, reason: "the feed's \"title\" is a number, not a string; ignored")])
    }

    @Test func acceptsAByteOrderMarkAndReportsTrailingContent() throws {
        let text = "\u{FEFF}" + jsonFeed(items: [#"{"id": "1"}"#]) + "\n<html>"
        let parsed = try parseJSONFeed(text)
        #expect(parsed.entries.map(\.id) == ["1"])
        #expect(parsed.problems == [ImportProblem(line: 5, reason: "content after the end of the JSON document, ignored")])
    }

    @Test func stopsWhenOnEntryThrows() {
        struct Stop: Error, Equatable {}
        var delivered = 0
        #expect(throws: Stop()) {
            _ = try JSONFeedParser.parse(
                .bytes(Array(jsonFeed(items: [#"{"id": "1"}"#, #"{"id": "2"}"#, #"{"id": "3"}"#]).utf8)),
                onEntry: { _ in
                    delivered += 1
                    if delivered == 2 { throw Stop() }
                },
                onProblem: { _ in })
        }
        #expect(delivered == 2)
    }

    @Test func passesOnAnImportErrorFromOnEntryUnchanged() {
        #expect(throws: ImportError("the store is full", line: 99)) {
            _ = try JSONFeedParser.parse(
                .bytes(Array(jsonFeed(items: [#"{"id": "1"}"#]).utf8)),
                onEntry: { _ in throw ImportError("the store is full", line: 99) },
                onProblem: { _ in })
        }
    }
}
