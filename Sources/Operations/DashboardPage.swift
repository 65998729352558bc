import HTMLTemplates

/// The operator's dashboard (`admin.mustache`) and its sign-in form (`admin-sign-in.mustache`), compiled at load against its
/// schema like every page: a template error stops the start with its file and
/// line, not the first operator's visit.
package struct DashboardPage: Sendable {
    static let row = TemplateSchema(["name": .text, "value": .text])
    static let schema = TemplateSchema(["css": .text, "js": .text, "rows": .list(row), "hitChart": .text, "latencyChart": .text])

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

    /// The dashboard with `rows` (name and value, escaped) and two charts (SVG, written raw).
    func render(rows: [(name: String, value: String)], hitChart: String, latencyChart: String) -> [UInt8] {
        let values = TemplateData(
            Self.schema,
            [
                "css": .text(styleURL), "js": .text(scriptURL),
                "rows": .list(rows.map { TemplateData(Self.row, ["name": .text($0.name), "value": .text($0.value)]) }),
                "hitChart": .text(hitChart), "latencyChart": .text(latencyChart),
            ])
        var html = HTMLBuffer(capacity: 8192)
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
}
