import XMLStream

/// The namespaces feed elements come in, and how an element's namespace is
/// read when the feed forgot to declare a well-known prefix.
enum FeedNamespace {
    static let atom = "http://www.w3.org/2005/Atom"
    static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    static let rss10 = "http://purl.org/rss/1.0/"
    static let rss090 = "http://my.netscape.com/rdf/simple/0.9/"
    static let content = "http://purl.org/rss/1.0/modules/content/"
    static let dublinCore = "http://purl.org/dc/elements/1.1/"
    static let media = "http://search.yahoo.com/mrss/"
    static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
    static let xhtml = "http://www.w3.org/1999/xhtml"

    /// Prefixes feeds use, sometimes without their `xmlns:` declaration
    /// (libxml2 then reports a namespace error and gives no namespace).
    private static let conventionalPrefixes = ["media": media, "content": content, "dc": dublinCore, "itunes": itunes]

    /// The namespace `name` is in, taking an undeclared conventional prefix
    /// at its word, and Media RSS's URI without its final slash as the same.
    static func of(_ name: XMLName) -> String? {
        guard let uri = name.namespaceURI else { return name.prefix.flatMap { conventionalPrefixes[$0] } }
        return uri == "http://search.yahoo.com/mrss" ? media : uri
    }
}
