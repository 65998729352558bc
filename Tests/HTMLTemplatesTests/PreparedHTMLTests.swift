import Foundation
import Testing

@testable import HTMLTemplates

/// Templates rendered ahead with holes: written out with the holes filled,
/// they are the bytes a render would make; a section over an open field is
/// kept open and shown as the values say; a list over one cannot be prepared.
@Suite struct PreparedHTMLTests {
    static let names = ["title", "position", "starred"]
    static let schema = TemplateSchema(["title": .text, "position": .text, "starred": .flag])

    struct Row: TemplateValues {
        var title: String
        var position: String
        var starred: Bool
        func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
            let text = field == 0 ? title : position
            if escaped { html.append(escaped: text) } else { html.append(raw: text) }
        }
        func isPresent(_ field: Int) -> Bool { field == 2 ? starred : true }
    }

    func compile(_ text: String) throws -> HTMLTemplate {
        let folder = try HTMLTemplateTests.Folder(["row": text])
        return try TemplateFolder(path: folder.path).compile("row", schema: Self.schema)
    }

    func rendered(_ template: HTMLTemplate, _ row: Row) -> [UInt8] {
        var html = HTMLBuffer()
        template.render(row, into: &html)
        return html.bytes
    }

    @Test func writingAPreparedRowFillsItsHolesWithTheValuesOfTheDay() throws {
        let template = try compile(#"<p id="{{position}}">{{title}}{{#starred}}*{{/starred}} at {{{position}}}/{{position}}</p>"#)
        for (title, starred) in [("a<b>&\"c'", true), ("", false), ("東京 🚀", true)] {
            let prepared = try #require(PreparedHTML.prepare(template, Row(title: title, position: "never", starred: starred), open: [1]))
            #expect(!String(decoding: prepared, as: UTF8.self).contains("never"))
            for position in ["1", "<2>", "123456"] {
                var html = HTMLBuffer()
                let written = prepared.withUnsafeBytes {
                    PreparedHTML.write($0, values: Row(title: "other", position: position, starred: !starred), open: PreparedHTML.mask([1]), into: &html)
                }
                #expect(written)
                #expect(html.bytes == rendered(template, Row(title: title, position: position, starred: starred)))
            }
        }
    }

    @Test func aSectionOverAnOpenFieldIsKeptOpenAndShownAsTheValuesSayWhenWritten() throws {
        let template = try compile(
            #"<p{{#starred}} class="s" data-at="{{position}}"{{/starred}}>{{title}}{{^starred}} plain{{#starred}}never{{/starred}}{{/starred}}</p>"#)
        let open: Set<Int> = [1, 2]
        for preparedStarred in [false, true] {
            let prepared = try #require(PreparedHTML.prepare(template, Row(title: "a&b", position: "never", starred: preparedStarred), open: open))
            #expect(!String(decoding: prepared, as: UTF8.self).contains("data-at=\"never"))
            for starred in [false, true] {
                var html = HTMLBuffer()
                let written = prepared.withUnsafeBytes {
                    PreparedHTML.write($0, values: Row(title: "other", position: "<9>", starred: starred), open: PreparedHTML.mask(open), into: &html)
                }
                #expect(written)
                #expect(html.bytes == rendered(template, Row(title: "a&b", position: "<9>", starred: starred)))
            }
        }
    }

    @Test func aListSectionOverAnOpenFieldCannotBePrepared() throws {
        struct Page: TemplateValues {
            func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {}
            func count(of field: Int) -> Int { 1 }
            func element(of field: Int, at index: Int) -> any TemplateValues { Row(title: "t", position: "1", starred: true) }
        }
        let folder = try HTMLTemplateTests.Folder(["page": "{{#rows}}<li>{{title}}</li>{{/rows}}"])
        let template = try TemplateFolder(path: folder.path).compile("page", schema: TemplateSchema(["rows": .list(Self.schema)]))
        #expect(PreparedHTML.prepare(template, Page(), open: [0]) == nil)
    }

    @Test func openSectionsThatDoNotPairWriteNothing() throws {
        // Holes: (offset, field, kind); the body "AB".
        func bytes(_ holes: [(UInt8, UInt8, UInt8)]) -> [UInt8] {
            [UInt8(holes.count)] + holes.flatMap { [$0.0, 0, 0, 0, $0.1, $0.2] } + Array("AB".utf8)
        }
        let bad = [
            bytes([(0, 2, 2)]),  // a start never ended
            bytes([(1, 2, 4)]),  // an end never started
            bytes([(0, 2, 2), (1, 1, 4)]),  // ended as another field
            bytes([(0, 2, 9)]),  // a kind no hole has
            bytes([(1, 2, 2), (0, 2, 4)]),  // ended before it started
        ]
        var html = HTMLBuffer()
        for prepared in bad {
            #expect(
                !prepared.withUnsafeBytes {
                    PreparedHTML.write($0, values: Row(title: "", position: "", starred: true), open: PreparedHTML.mask([1, 2]), into: &html)
                })
        }
        #expect(html.bytes.isEmpty)
        // Paired, the section's bytes show or not.
        let good = bytes([(0, 2, 2), (1, 2, 4)])
        for (starred, expected) in [(true, "AB"), (false, "B")] {
            var html = HTMLBuffer()
            #expect(
                good.withUnsafeBytes {
                    PreparedHTML.write($0, values: Row(title: "", position: "", starred: starred), open: PreparedHTML.mask([1, 2]), into: &html)
                })
            #expect(String(decoding: html.bytes, as: UTF8.self) == expected)
        }
    }

    @Test func bytesNotInThePreparedFormWriteNothing() throws {
        var html = HTMLBuffer()
        // Two holes announced, one given; a hole past the end; a hole of a field
        // not left open (the title), of a field past any schema, more holes than any row has.
        let bad: [[UInt8]] = [
            [], [2, 0, 0, 0, 0, 1, 0], [1, 9, 0, 0, 0, 1, 0, 65], [1, 0, 0, 0, 0, 0, 1, 65], [1, 0, 0, 0, 0, 200, 1, 65],
            [255] + [UInt8](repeating: 0, count: 2000),
        ]
        for bytes in bad {
            #expect(
                !bytes.withUnsafeBytes {
                    PreparedHTML.write($0, values: Row(title: "", position: "", starred: false), open: PreparedHTML.mask([1]), into: &html)
                })
        }
        #expect(html.bytes.isEmpty)
        // The same bytes with the field left open are written.
        let good: [UInt8] = [1, 0, 0, 0, 0, 1, 1, 65]
        #expect(
            good.withUnsafeBytes { PreparedHTML.write($0, values: Row(title: "t", position: "7", starred: false), open: PreparedHTML.mask([1]), into: &html) })
        #expect(String(decoding: html.bytes, as: UTF8.self) == "7A")
    }

    @Test func aListElementMayWriteItsBodyPrepared() throws {
        struct Page: TemplateValues {
            var rows: [Row]
            var prepared: [[UInt8]?]
            func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {}
            func count(of field: Int) -> Int { rows.count }
            func element(of field: Int, at index: Int) -> any TemplateValues { Element(row: rows[index], prepared: prepared[index]) }
        }
        struct Element: TemplateValues {
            var row: Row
            var prepared: [UInt8]?
            func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) { row.write(field, into: &html, escaped: escaped) }
            func isPresent(_ field: Int) -> Bool { row.isPresent(field) }
            func writePrepared(into html: inout HTMLBuffer) -> Bool {
                guard let prepared else { return false }
                return prepared.withUnsafeBytes { PreparedHTML.write($0, values: row, open: PreparedHTML.mask([1]), into: &html) }
            }
        }
        let rowText = "<li>{{position}}. {{title}}{{#starred}}*{{/starred}}</li>"
        let folder = try HTMLTemplateTests.Folder(["row": rowText, "page": "<ol>{{#rows}}{{> row}}{{/rows}}</ol>"])
        let templates = try TemplateFolder(path: folder.path)
        let row = try templates.compile("row", schema: Self.schema)
        let page = try templates.compile("page", schema: TemplateSchema(["rows": .list(Self.schema)]))
        #expect(page.repeats(row, over: [0]))
        let rows = [Row(title: "a", position: "1", starred: false), Row(title: "b&", position: "2", starred: true)]
        let ahead = rows.map { PreparedHTML.prepare(row, Row(title: $0.title, position: "", starred: $0.starred), open: [1]) }
        var plain = HTMLBuffer()
        var mixed = HTMLBuffer()
        page.render(Page(rows: rows, prepared: [nil, nil]), into: &plain)
        page.render(Page(rows: rows, prepared: [ahead[0], nil]), into: &mixed)
        #expect(String(decoding: plain.bytes, as: UTF8.self) == "<ol><li>1. a</li><li>2. b&amp;*</li></ol>")
        #expect(mixed.bytes == plain.bytes)
    }
}
