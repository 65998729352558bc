/// An element's or attribute's name as the document wrote it: the local name,
/// the namespace it is in, and the prefix that was used for it.
public struct XMLName: Sendable, Equatable {
    /// The namespace of `xml:base`, `xml:lang` and the other `xml:` attributes.
    public static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// The name without its prefix (`content` for `media:content`).
    public var localName: String
    /// The namespace URI in effect for the name, when it has one.
    public var namespaceURI: String?
    /// The prefix written in the document (`media`), when there was one.
    public var prefix: String?

    /// A name.
    public init(localName: String, namespaceURI: String? = nil, prefix: String? = nil) {
        self.localName = localName
        self.namespaceURI = namespaceURI
        self.prefix = prefix
    }

    /// The name as written, `prefix:localName` or `localName`.
    public var qualifiedName: String {
        if let prefix { return "\(prefix):\(localName)" }
        return localName
    }

    /// Whether this is `localName` in `namespace` (`nil`: in no namespace).
    public func `is`(_ localName: String, in namespace: String?) -> Bool {
        self.localName == localName && namespaceURI == namespace
    }
}

/// One attribute of a start tag, its value with entity and character
/// references already replaced.
public struct XMLAttribute: Sendable, Equatable {
    /// The attribute's name; attributes without a prefix are in no namespace.
    public var name: XMLName
    /// The value.
    public var value: String

    /// An attribute.
    public init(name: XMLName, value: String) {
        self.name = name
        self.value = value
    }
}

/// A start tag: the element's name, its attributes (namespace declarations
/// left out) and the line it was read on.
public struct XMLStartElement: Sendable, Equatable {
    /// The element's name.
    public var name: XMLName
    /// The attributes in document order, without `xmlns` declarations.
    public var attributes: [XMLAttribute]
    /// The line (1-based) on which the start tag ends.
    public var line: Int

    /// A start tag.
    public init(name: XMLName, attributes: [XMLAttribute] = [], line: Int = 0) {
        self.name = name
        self.attributes = attributes
        self.line = line
    }

    /// The value of the attribute `localName` in `namespace` (`nil`: an
    /// attribute without a prefix), when the tag has it.
    public func attribute(_ localName: String, in namespace: String? = nil) -> String? {
        attributes.first { $0.name.is(localName, in: namespace) }?.value
    }
}
