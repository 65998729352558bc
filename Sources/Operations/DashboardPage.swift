import Foundation
import HTMLTemplates
import WarmfeedCore

/// The operator's dashboard (`admin.mustache`) and its sign-in form (`admin-sign-in.mustache`), compiled at load against its
/// schema like every page: a template error stops the start with its file and
/// line, not the first operator's visit.
///
/// The dashboard's schema is every number of the stats (`CacheStats.numbers`)
/// by its `/metrics` name, so the template says what each row shows and how
/// it reads, and a number named there that the stats lack stops the start.
/// `numbers` lists them all, for the table of every number.
package struct DashboardPage: Sendable {
    static let number = TemplateSchema(["name": .text, "value": .text, "kind": .text])
    /// A source's row of the sources' table (the first ones, failing first).
    static let source = TemplateSchema([
        "url": .text, "title": .text, "state": .text, "failing": .flag, "items": .text, "last_fetch_at": .text, "last_result": .text,
        "next_poll_at": .text, "failures": .text, "bytes": .text,
    ])
    static let schema = TemplateSchema(
        [("css", .text), ("js", .text), ("hitChart", .text), ("latencyChart", .text), ("numbers", .list(number)), ("sources", .list(source))]
            + CacheStats.numbers.map { ($0.name, .text) })

    /// The sign-in form (`admin-sign-in.mustache`): what a browser without a session is shown.
    static let signInSchema = TemplateSchema(["css": .text, "message": .text])

    private let template: HTMLTemplate
    private let signInTemplate: HTMLTemplate
    /// The feed's versioned stylesheet, which the dashboard shares.
    let styleURL: String
    /// The dashboard's script (versioned), which reads its numbers again every few seconds.
    let scriptURL: String

    package init(templatesFolder: String, styleURL: String, scriptURL: String) throws {
        let folder = try TemplateFolder(path: templatesFolder)
        template = try folder.compile("admin", schema: Self.schema)
        signInTemplate = try folder.compile("admin-sign-in", schema: Self.signInSchema)
        self.styleURL = styleURL
        self.scriptURL = scriptURL
    }

    /// The dashboard of `stats`, with two charts (SVG, written raw).
    func render(_ stats: CacheStats, hitChart: String, latencyChart: String) -> [UInt8] {
        let values = Values(
            head: [styleURL, scriptURL, hitChart, latencyChart],
            numbers: CacheStats.numbers.map { ($0, $0.read(stats)) }, sources: stats.source?.shown ?? [])
        var html = HTMLBuffer(capacity: 16384)
        template.render(values, into: &html)
        return html.bytes
    }

    /// The sign-in form, with `message` (escaped) above it when there is one.
    func signIn(message: String?) -> [UInt8] {
        let values = TemplateData(Self.signInSchema, ["css": .text(styleURL), "message": .text(message ?? "")])
        var html = HTMLBuffer(capacity: 2048)
        signInTemplate.render(values, into: &html)
        return html.bytes
    }

    /// A source's row: its state in words ("failing since …", not by colour alone).
    static func row(of source: SourceStatus) -> TemplateData {
        let state = source.failingSince.map { "\(source.state) since \($0)" } ?? source.state
        return TemplateData(
            Self.source,
            [
                "url": .text(source.url), "title": .text(source.title ?? ""), "state": .text(state), "failing": .flag(source.severity < 2),
                "items": .text(String(source.items)), "last_fetch_at": .text(source.lastFetchAt ?? "never"),
                "last_result": .text(source.lastResult ?? ""), "next_poll_at": .text(source.nextPollAt ?? ""),
                "failures": .text(String(source.consecutiveFailures)), "bytes": .text(words(.number(Double(source.bytesTotal)), unit: .bytes)),
            ])
    }

    /// How the dashboard writes a number: counts as they are, bytes in MB,
    /// seconds in ms below one, ratios as percentages, flags as yes or no;
    /// "–" when the stats hold none.
    static func words(_ value: StatNumber.Value?, unit: StatNumber.Unit) -> String {
        switch value {
        case nil: "–"
        case .text(let text)?: text
        case .number(let number)?:
            switch unit {
            case .count, .text: String(format: "%.0f", number)
            case .bytes: String(format: "%.1f MB", number / 1_048_576)
            case .seconds: number < 1 ? String(format: "%.0f ms", number * 1000) : String(format: "%.1f s", number)
            case .ratio: String(format: "%.1f%%", number * 100)
            case .flag: number == 1 ? "yes" : "no"
            }
        }
    }

    /// The dashboard's values: the four head fields, the list of every
    /// number, the first sources, then each number by its place in
    /// `CacheStats.numbers`. A section over a number shows when the stats
    /// hold it (a flag: when yes).
    struct Values: TemplateValues {
        let head: [String]
        let numbers: [(number: StatNumber, value: StatNumber.Value?)]
        let sources: [SourceStatus]

        /// Field numbers: 0–3 the head, 4 the list of numbers, 5 the sources, then the numbers.
        static let listField = 4
        static let sourcesField = 5
        static let firstNumber = 6

        func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
            let text =
                field < Self.listField
                ? head[field] : DashboardPage.words(numbers[field - Self.firstNumber].value, unit: numbers[field - Self.firstNumber].number.unit)
            if escaped { html.append(escaped: text) } else { html.append(raw: text) }
        }

        func isPresent(_ field: Int) -> Bool {
            if field < Self.listField { return !head[field].isEmpty }
            if field == Self.sourcesField { return !sources.isEmpty }
            guard field >= Self.firstNumber, let value = numbers[field - Self.firstNumber].value else { return field == Self.listField }
            switch value {
            case .text(let text): return !text.isEmpty
            case .number(let number): return numbers[field - Self.firstNumber].number.unit != .flag || number == 1
            }
        }

        func count(of field: Int) -> Int {
            switch field {
            case Self.listField: numbers.count
            case Self.sourcesField: sources.count
            default: 0
            }
        }

        func element(of field: Int, at index: Int) -> any TemplateValues {
            if field == Self.sourcesField { return DashboardPage.row(of: sources[index]) }
            let (number, value) = numbers[index]
            let kind =
                switch number.kind {
                case .gauge: "gauge"
                case .counter: "counter"
                case .words: "words"
                }
            return TemplateData(
                DashboardPage.number, ["name": .text(number.name), "value": .text(DashboardPage.words(value, unit: number.unit)), "kind": .text(kind)])
        }
    }
}
