import Foundation

/// A Mustache template compiled once, at load, against a schema: names are
/// field numbers, partials are inlined, and rendering appends bytes into one
/// `HTMLBuffer` without building a dictionary, a `String` or a `Character`.
///
/// The subset of Mustache it reads: `{{name}}` (escaped), `{{{name}}}` and
/// `{{& name}}` (raw), `{{#name}}`/`{{^name}}`…`{{/name}}` sections,
/// `{{> partial}}` and `{{! comments }}`, with the standalone-line rule.
/// Anything else — or a name its schema lacks — is a `TemplateError` naming
/// the file and the line.
public struct HTMLTemplate: Sendable {
    /// The compiler's tree; flattened into `ops` for rendering.
    indirect enum Node: Sendable, Equatable {
        case text([UInt8])
        case value(depth: Int, field: Int, escaped: Bool)
        case section(depth: Int, field: Int, kind: SectionKind, inverted: Bool, body: [Node])
    }

    enum SectionKind: Sendable, Equatable {
        /// Shown once when the text or flag is present; reads no new names.
        case present
        /// Repeated over a list, or shown once over a present object, reading its names first.
        case nested
    }

    /// One step of rendering: plain values in one array, so walking them
    /// retains nothing. A section's body is the ops up to `end`.
    struct Op: Sendable {
        enum Kind: UInt8, Sendable { case text, escaped, raw, present, absent, nested, nestedAbsent }
        var kind: Kind
        var depth: Int32 = 0
        var field: Int32 = 0
        /// Text: where its bytes sit in `text`. Sections: the op after the body.
        var start = 0
        var end = 0
    }

    let ops: [Op]
    /// The compiled tree, kept to compare templates (`repeats(_:over:)`).
    let nodes: [Node]
    /// Every literal byte of the template, in one array.
    let text: [UInt8]

    init(nodes: [Node]) {
        var ops: [Op] = []
        var text: [UInt8] = []
        func flatten(_ nodes: [Node]) {
            for node in nodes {
                switch node {
                case .text(let bytes):
                    ops.append(Op(kind: .text, start: text.count, end: text.count + bytes.count))
                    text += bytes
                case .value(let depth, let field, let escaped):
                    ops.append(Op(kind: escaped ? .escaped : .raw, depth: Int32(depth), field: Int32(field)))
                case .section(let depth, let field, let kind, let inverted, let body):
                    let index = ops.count
                    let opKind: Op.Kind =
                        switch (kind, inverted) {
                        case (.present, false): .present
                        case (.present, true): .absent
                        case (.nested, false): .nested
                        case (.nested, true): .nestedAbsent
                        }
                    ops.append(Op(kind: opKind, depth: Int32(depth), field: Int32(field)))
                    flatten(body)
                    ops[index].start = index + 1
                    ops[index].end = ops.count
                }
            }
        }
        flatten(nodes)
        self.nodes = nodes
        self.ops = ops
        self.text = text
    }

    /// Whether every section over the list `fields` (at the top level, not
    /// inverted) repeats exactly `body`'s template, and there is at least one:
    /// then an element of those lists may write `body` rendered ahead
    /// (`TemplateValues.writePrepared`) and the output is the same.
    public func repeats(_ body: HTMLTemplate, over fields: Set<Int>) -> Bool {
        var found = false
        for node in nodes {
            guard case .section(0, let field, .nested, false, let inner) = node, fields.contains(field) else { continue }
            guard inner == body.nodes else { return false }
            found = true
        }
        return found
    }

    /// Renders the template over `values` into `html`.
    public func render(_ values: some TemplateValues, into html: inout HTMLBuffer) {
        var stack: [any TemplateValues] = [values]
        stack.reserveCapacity(8)
        ops.withUnsafeBufferPointer { ops in
            text.withUnsafeBufferPointer { text in
                Self.render(ops, 0..<ops.count, text: text, stack: &stack, into: &html)
            }
        }
    }

    private static func render(
        _ ops: UnsafeBufferPointer<Op>, _ range: Range<Int>, text: UnsafeBufferPointer<UInt8>,
        stack: inout [any TemplateValues], into html: inout HTMLBuffer
    ) {
        var index = range.lowerBound
        while index < range.upperBound {
            let op = ops[index]
            index += 1
            let top = stack.count - 1 - Int(op.depth)
            switch op.kind {
            case .text:
                html.append(raw: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: text[op.start..<op.end])))
            case .escaped, .raw:
                stack[top].write(Int(op.field), into: &html, escaped: op.kind == .escaped)
            case .present, .absent:
                let field = Int(op.field)
                let inverted = op.kind == .absent
                if let held = stack[top].sectionBegins(field, inverted: inverted, at: html.bytes.count) {
                    if held {
                        render(ops, op.start..<op.end, text: text, stack: &stack, into: &html)
                        stack[top].sectionEnds(field, at: html.bytes.count)
                    }
                } else if stack[top].isPresent(field) != inverted {
                    render(ops, op.start..<op.end, text: text, stack: &stack, into: &html)
                }
                index = op.end
            case .nestedAbsent:
                if stack[top].count(of: Int(op.field)) == 0 {
                    render(ops, op.start..<op.end, text: text, stack: &stack, into: &html)
                }
                index = op.end
            case .nested:
                // The list's owner taken out of the stack once: each `stack[top]`
                // call copies the existential (a retain and a release), once a row.
                let owner = stack[top]
                let count = owner.count(of: Int(op.field))
                for element in 0..<count {
                    let values = owner.element(of: Int(op.field), at: element)
                    if values.writePrepared(into: &html) { continue }
                    stack.append(values)
                    render(ops, op.start..<op.end, text: text, stack: &stack, into: &html)
                    stack.removeLast()
                }
                index = op.end
            }
        }
    }
}

/// The Mustache files of a folder, compiled on demand against schemas.
public struct TemplateFolder: Sendable {
    /// The folder, as given (errors name files inside it).
    public let path: String
    private let sources: [String: [UInt8]]

    /// Reads every `*.mustache` file of `path`.
    public init(path: String) throws {
        self.path = path
        var sources: [String: [UInt8]] = [:]
        guard let files = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            throw TemplateError(file: path, line: 0, message: "the templates folder cannot be read (is --templates right?)")
        }
        for file in files where file.hasSuffix(".mustache") {
            guard let contents = FileManager.default.contents(atPath: path + "/" + file) else {
                throw TemplateError(file: path + "/" + file, line: 0, message: "cannot be read")
            }
            sources[String(file.dropLast(".mustache".count))] = Array(contents)
        }
        self.sources = sources
    }

    /// The bytes of `name.mustache`, or nil when the folder has none.
    public func contents(of name: String) -> [UInt8]? { sources[name] }

    /// Whether the folder has `name.mustache`.
    public func has(_ name: String) -> Bool { sources[name] != nil }

    /// Compiles `name.mustache` against `schema`.
    public func compile(_ name: String, schema: TemplateSchema) throws(TemplateError) -> HTMLTemplate {
        var compiler = Compiler(folder: self)
        return HTMLTemplate(nodes: try compiler.compile(name, scopes: [schema], indent: [], from: nil))
    }

    fileprivate func file(_ name: String) -> String { path + "/" + name + ".mustache" }

    fileprivate func source(_ name: String) -> [UInt8]? { sources[name] }
}

/// Turns tokens into nodes, resolving every name against the schemas in scope.
private struct Compiler {
    let folder: TemplateFolder
    var partialDepth = 0

    mutating func compile(
        _ name: String, scopes: [TemplateSchema], indent: [UInt8], from: (file: String, line: Int)?
    ) throws(TemplateError) -> [HTMLTemplate.Node] {
        guard let source = folder.source(name) else {
            throw TemplateError(
                file: from?.file ?? folder.file(name), line: from?.line ?? 0, message: "template \(name).mustache is missing from \(folder.path)")
        }
        let file = folder.file(name)
        var tokens = try TemplateTokens(source, file: file).tokens
        if !indent.isEmpty { tokens = Self.indented(tokens, by: indent) }
        var position = 0
        let nodes = try block(tokens, &position, scopes: scopes, file: file, closing: nil)
        return nodes
    }

    /// Nodes until the `{{/closing}}` tag (or the end, when `closing` is nil).
    private mutating func block(
        _ tokens: [TemplateTokens.Token], _ position: inout Int, scopes: [TemplateSchema], file: String, closing: (name: String, line: Int)?
    ) throws(TemplateError) -> [HTMLTemplate.Node] {
        var nodes: [HTMLTemplate.Node] = []
        func appendText(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            if case .text(let before) = nodes.last { nodes[nodes.count - 1] = .text(before + bytes) } else { nodes.append(.text(bytes)) }
        }
        while position < tokens.count {
            let token = tokens[position]
            position += 1
            switch token.kind {
            case .text(let bytes):
                appendText(bytes)
            case .comment:
                continue
            case .variable(let escaped):
                let (depth, field, kind) = try resolve(token.name, scopes, file: file, line: token.line)
                guard case .text = kind else {
                    throw TemplateError(file: file, line: token.line, message: "{{\(token.name)}} is not text: use it as a section")
                }
                nodes.append(.value(depth: depth, field: field, escaped: escaped))
            case .section, .inverted:
                let inverted = token.kind == .inverted
                let (depth, field, kind) = try resolve(token.name, scopes, file: file, line: token.line)
                let body: [HTMLTemplate.Node]
                let sectionKind: HTMLTemplate.SectionKind
                switch kind {
                case .text, .flag:
                    sectionKind = .present
                    body = try block(tokens, &position, scopes: scopes, file: file, closing: (token.name, token.line))
                case .object(let inner), .list(let inner):
                    sectionKind = .nested
                    body = try block(tokens, &position, scopes: inverted ? scopes : scopes + [inner], file: file, closing: (token.name, token.line))
                }
                nodes.append(.section(depth: depth, field: field, kind: sectionKind, inverted: inverted, body: body))
            case .close:
                guard let closing else {
                    throw TemplateError(file: file, line: token.line, message: "{{/\(token.name)}} closes no section")
                }
                guard closing.name == token.name else {
                    throw TemplateError(file: file, line: token.line, message: "{{/\(token.name)}} closes {{#\(closing.name)}} of line \(closing.line)")
                }
                return nodes
            case .partial(let indent):
                partialDepth += 1
                defer { partialDepth -= 1 }
                guard partialDepth <= 16 else {
                    throw TemplateError(file: file, line: token.line, message: "partials nest more than 16 deep ({{> \(token.name)}} includes itself?)")
                }
                for node in try compile(token.name, scopes: scopes, indent: indent, from: (file, token.line)) {
                    if case .text(let bytes) = node { appendText(bytes) } else { nodes.append(node) }
                }
            }
        }
        if let closing {
            throw TemplateError(file: file, line: closing.line, message: "{{#\(closing.name)}} is never closed")
        }
        return nodes
    }

    private func resolve(
        _ name: String, _ scopes: [TemplateSchema], file: String, line: Int
    ) throws(TemplateError) -> (depth: Int, field: Int, kind: TemplateSchema.Kind) {
        for (depth, scope) in scopes.reversed().enumerated() {
            if let found = scope.fields[name] { return (depth, found.field, found.kind) }
        }
        throw TemplateError(file: file, line: line, message: "\(name) is not a name this template is given")
    }

    /// A standalone partial's tokens with its indentation before every line.
    private static func indented(_ tokens: [TemplateTokens.Token], by indent: [UInt8]) -> [TemplateTokens.Token] {
        var result: [TemplateTokens.Token] = []
        var atLineStart = true
        for var token in tokens {
            if case .text(let bytes) = token.kind {
                var out: [UInt8] = []
                for byte in bytes {
                    if atLineStart { out += indent; atLineStart = false }
                    out.append(byte)
                    if byte == UInt8(ascii: "\n") { atLineStart = true }
                }
                token.kind = .text(out)
            } else if atLineStart {
                result.append(TemplateTokens.Token(kind: .text(indent), name: "", line: token.line))
                atLineStart = false
            }
            result.append(token)
        }
        return result
    }
}
