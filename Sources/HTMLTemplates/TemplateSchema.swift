/// The names a template may use, and what each one is, fixed when the
/// templates are loaded: a name a template uses and its schema lacks is an
/// error at start-up (with the file and line), never an empty string at
/// request time, and each name is looked up once, at load, not per render.
public struct TemplateSchema: Sendable {
    /// What a name holds.
    public indirect enum Kind: Sendable {
        /// Text (or a number) to write; a section over it shows when it is present.
        case text
        /// A yes or no: a section over it shows when yes.
        case flag
        /// One nested set of values (present or not); a section over it reads its names first.
        case object(TemplateSchema)
        /// A list; a section over it is repeated for each element, reading its names first.
        case list(TemplateSchema)
    }

    /// Each name with the field number its values answer to, and its kind.
    public let fields: [String: (field: Int, kind: Kind)]

    /// A schema of `names`, in order: the first name is field 0, and so on.
    public init(_ names: KeyValuePairs<String, Kind>) {
        self.init(names.map { ($0.key, $0.value) })
    }

    /// A schema of `names` made at run time (a list of numbers, say), in
    /// order; each name once.
    public init(_ names: [(String, Kind)]) {
        var fields: [String: (field: Int, kind: Kind)] = [:]
        for (index, (name, kind)) in names.enumerated() {
            precondition(fields[name] == nil, "\(name) is named twice in a template schema")
            fields[name] = (index, kind)
        }
        self.fields = fields
    }
}

/// The values a compiled template reads while it renders, by field number
/// (the place of the name in the schema the template was compiled against).
public protocol TemplateValues {
    /// Writes `field` (text or number) into `html`, escaped unless `escaped` is false.
    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool)
    /// Whether a section over `field` shows (text present, flag set).
    func isPresent(_ field: Int) -> Bool
    /// How many times a section over a list or object `field` is repeated (0 or 1 for an object).
    func count(of field: Int) -> Int
    /// The `index`-th element of a list `field` (or the object, at 0).
    func element(of field: Int, at index: Int) -> any TemplateValues
    /// As an element of a list section: writes the section's body for this
    /// element, rendered ahead (see `PreparedHTML`), and answers true; false
    /// to have the body rendered field by field.
    func writePrepared(into html: inout HTMLBuffer) -> Bool
    /// Before a section over the text or flag `field` (`inverted`: a
    /// `{{^…}}` section), with `offset` bytes written so far: nil to have it
    /// shown as `isPresent` says; true to render its body whatever that says,
    /// and be told when it ends (`sectionEnds`). `PreparedHTML` leaves an open
    /// field's section open this way, to be shown or not when it is served.
    func sectionBegins(_ field: Int, inverted: Bool, at offset: Int) -> Bool?
    /// After the body of a section `sectionBegins` answered true for.
    func sectionEnds(_ field: Int, at offset: Int)
}

extension TemplateValues {
    public func isPresent(_ field: Int) -> Bool { true }
    public func count(of field: Int) -> Int { 0 }
    public func element(of field: Int, at index: Int) -> any TemplateValues {
        preconditionFailure("field \(field) is not a list or an object")
    }
    public func writePrepared(into html: inout HTMLBuffer) -> Bool { false }
    public func sectionBegins(_ field: Int, inverted: Bool, at offset: Int) -> Bool? { nil }
    public func sectionEnds(_ field: Int, at offset: Int) {}
}
