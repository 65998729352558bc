/// Values built by name, for a page rendered rarely (an error page, a
/// dashboard): each name is looked up in the template's schema once, when the
/// values are built, and a name the schema lacks is a programmer's error.
///
/// A page on every request's path writes its fields in place instead (a
/// `TemplateValues` of its own), without building anything per render.
public struct TemplateData: TemplateValues, Sendable {
    /// What a name is given.
    public enum Value: Sendable {
        /// Text, escaped unless the template writes it with `{{{ }}}`; a section over it shows when it is not empty.
        case text(String)
        case flag(Bool)
        /// A nested set of values; nil hides a section over it.
        case object(TemplateData?)
        case list([TemplateData])
    }

    private var values: [Value?]

    /// `named`'s values placed by `schema`'s field numbers; a name left out reads as absent.
    public init(_ schema: TemplateSchema, _ named: [String: Value]) {
        values = Array(repeating: nil, count: schema.fields.count)
        for (name, value) in named {
            guard let field = schema.fields[name]?.field else { preconditionFailure("\(name) is not in the template's schema") }
            values[field] = value
        }
    }

    public func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
        guard case .text(let text) = values[field] else { return }
        if escaped { html.append(escaped: text) } else { html.append(raw: text) }
    }

    public func isPresent(_ field: Int) -> Bool {
        switch values[field] {
        case .text(let text): !text.isEmpty
        case .flag(let flag): flag
        case .object(let object): object != nil
        case .list(let list): !list.isEmpty
        case nil: false
        }
    }

    public func count(of field: Int) -> Int {
        switch values[field] {
        case .object(let object): object == nil ? 0 : 1
        case .list(let list): list.count
        default: 0
        }
    }

    public func element(of field: Int, at index: Int) -> any TemplateValues {
        switch values[field] {
        case .object(let object?): object
        case .list(let list): list[index]
        default: preconditionFailure("field \(field) is not a list or an object")
        }
    }
}
