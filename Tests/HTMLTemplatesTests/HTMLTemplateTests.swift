import Foundation
import Testing

@testable import HTMLTemplates

/// The compiled templates: Mustache's subset as the page templates use it,
/// the standalone-line rule, escaping on bytes, and errors that name the
/// file and the line at load.
@Suite struct HTMLTemplateTests {
    /// A folder of templates written for one test, removed after.
    final class Folder {
        let path: String
        init(_ files: [String: String]) throws {
            path = NSTemporaryDirectory() + "html-templates-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for (name, text) in files { try text.write(toFile: path + "/\(name).mustache", atomically: true, encoding: .utf8) }
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static let item = TemplateSchema(["title": .text, "starred": .flag])
    static let footer = TemplateSchema(["text": .text])
    static let root = TemplateSchema(["heading": .text, "items": .list(item), "footer": .object(footer), "note": .text])

    func item(_ title: String, starred: Bool = false) -> TemplateData {
        TemplateData(Self.item, ["title": .text(title), "starred": .flag(starred)])
    }

    func render(_ files: [String: String], _ values: [String: TemplateData.Value], name: String = "main") throws -> String {
        let folder = try Folder(files)
        let template = try TemplateFolder(path: folder.path).compile(name, schema: Self.root)
        var html = HTMLBuffer()
        template.render(TemplateData(Self.root, values), into: &html)
        return String(decoding: html.bytes, as: UTF8.self)
    }

    func loadError(_ files: [String: String]) throws -> TemplateError? {
        let folder = try Folder(files)
        let templates = try TemplateFolder(path: folder.path)
        do throws(TemplateError) {
            _ = try templates.compile("main", schema: Self.root)
            return nil
        } catch {
            return TemplateError(file: String(error.file.split(separator: "/").last!), line: error.line, message: error.message)
        }
    }

    @Test func escapesTheFiveCharactersMustacheEscapesAndNothingElse() throws {
        let out = try render(["main": "<h1>{{heading}}</h1>|{{{heading}}}|{{& heading}}"], ["heading": .text(#"a<b>&"c' é 𝄞 \#u{0}"#)])
        #expect(out == #"<h1>a&lt;b&gt;&amp;&quot;c&#39; é 𝄞 \#u{0}</h1>|a<b>&"c' é 𝄞 \#u{0}|a<b>&"c' é 𝄞 \#u{0}"#)
    }

    @Test func sectionsRepeatOverListsShowFlagsAndReadOuterNames() throws {
        let template = "{{#items}}[{{title}}{{#starred}}*{{/starred}}{{^starred}}-{{/starred}} of {{heading}}]{{/items}}{{^items}}none{{/items}}"
        let three: [String: TemplateData.Value] = ["heading": .text("H"), "items": .list([item("a"), item("b", starred: true), item("c")])]
        #expect(try render(["main": template], three) == "[a- of H][b* of H][c- of H]")
        #expect(try render(["main": template], ["heading": .text("H"), "items": .list([])]) == "none")
    }

    @Test func objectsAndMissingValues() throws {
        let template = "{{#footer}}<f>{{text}}</f>{{/footer}}{{^footer}}no footer{{/footer}}{{#note}}({{note}}){{/note}}"
        let inner = TemplateData(Self.footer, ["text": .text("t")])
        #expect(try render(["main": template], ["footer": .object(inner), "note": .text("n")]) == "<f>t</f>(n)")
        #expect(try render(["main": template], ["footer": .object(nil)]) == "no footer")
    }

    @Test func partialsAreInlinedAndReadTheNamesInScope() throws {
        let files = ["main": "{{#items}}{{> row}}{{/items}}", "row": "<li>{{title}}</li>"]
        #expect(try render(files, ["items": .list([item("a"), item("b")])]) == "<li>a</li><li>b</li>")
    }

    @Test func standaloneTagsLeaveNoLineBehind() throws {
        let template = "<ul>\n  {{#items}}\n  <li>{{title}}</li>\n  {{/items}}\n</ul>\n{{! a comment }}\nend"
        #expect(try render(["main": template], ["items": .list([item("a"), item("b")])]) == "<ul>\n  <li>a</li>\n  <li>b</li>\n</ul>\nend")
        // Inline tags keep their line.
        #expect(try render(["main": "a {{#items}}x{{/items}} b\n"], ["items": .list([item("1")])]) == "a x b\n")
        // A standalone partial is indented line by line.
        let indented = ["main": "<ul>\n  {{> row}}\n</ul>", "row": "<li>\n{{heading}}\n</li>\n"]
        #expect(try render(indented, ["heading": .text("h")]) == "<ul>\n  <li>\n  h\n  </li>\n</ul>")
    }

    @Test func numbersAreWrittenInDecimal() {
        var html = HTMLBuffer()
        for number in [0, 7, 10, 12345, -1, Int.max, Int.min] {
            html.append(number)
            html.append(raw: " ".utf8)
        }
        html.append(5, width: 2)
        html.append(123, width: 2)
        #expect(String(decoding: html.bytes, as: UTF8.self) == "0 7 10 12345 -1 \(Int.max) \(Int.min) 05123")
    }

    @Test func errorsNameTheFileAndTheLine() throws {
        #expect(try loadError(["main": "a\nb {{#items}}\nc"]) == TemplateError(file: "main.mustache", line: 2, message: "{{#items}} is never closed"))
        #expect(try loadError(["main": "a\n\n{{/items}}"]) == TemplateError(file: "main.mustache", line: 3, message: "{{/items}} closes no section"))
        #expect(
            try loadError(["main": "{{#items}}\n{{/footer}}"])
                == TemplateError(file: "main.mustache", line: 2, message: "{{/footer}} closes {{#items}} of line 1"))
        #expect(try loadError(["main": "x\n{{heading"]) == TemplateError(file: "main.mustache", line: 2, message: "a tag opened with {{ is never closed"))
        #expect(try loadError(["main": "{{nope}}"]) == TemplateError(file: "main.mustache", line: 1, message: "nope is not a name this template is given"))
        #expect(try loadError(["main": "{{items}}"]) == TemplateError(file: "main.mustache", line: 1, message: "{{items}} is not text: use it as a section"))
        #expect(try loadError(["main": "{{=<% %>=}}"])?.message.contains("delimiters") == true)
        #expect(try loadError(["main": "{{a.b}}"])?.message.contains("not a plain name") == true)
        // An error inside a partial names the partial's file.
        #expect(
            try loadError(["main": "ok\n{{> row}}", "row": "\n\n{{bad}}"])
                == TemplateError(file: "row.mustache", line: 3, message: "bad is not a name this template is given"))
        #expect(try loadError(["main": "{{> missing}}"])?.message.contains("missing.mustache is missing") == true)
        #expect(try loadError(["main": "{{> main}}"])?.message.contains("nest more than 16 deep") == true)
    }
}
