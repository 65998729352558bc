import XMLStream

/// RSS 0.91–2.0 `item`s and RSS 1.0 (RDF) `item`s: which elements they are
/// and what their children mean; and the channel's children that describe
/// the feed as a whole (title, link, and RSS's `ttl` and skip lists).
enum RSSItemReader {
    /// Whether `name` is RSS's own element `localName`: in no namespace for
    /// RSS 0.9x and 2.0, in RSS 1.0's (or 0.90's) namespace for RDF, where
    /// feeds that leave it out are read too.
    static func isOwn(_ name: XMLName, _ localName: String, format: FeedFormat) -> Bool {
        guard name.localName == localName else { return false }
        let namespace = name.namespaceURI
        if format == .rdf {
            return namespace == nil || namespace == FeedNamespace.rss10 || namespace == FeedNamespace.rss090
        }
        return namespace == nil
    }

    /// Whether `element` starts an item.
    static func isItem(_ element: XMLStartElement, format: FeedFormat) -> Bool {
        isOwn(element.name, "item", format: format)
    }

    /// The identifier an item carries on its start tag: RDF's `rdf:about`.
    static func id(of element: XMLStartElement) -> String? {
        element.attribute("about", in: FeedNamespace.rdf)
    }

    /// A child of an item starts: the field to read its text into, if any;
    /// an `enclosure` is taken from its attributes right away.
    static func childStarted(
        _ element: XMLStartElement, format: FeedFormat, entry: inout OpenEntry, depth: Int
    ) -> FieldCapture? {
        let name = element.name
        guard isOwn(name, name.localName, format: format) else {
            return ModuleElements.childStarted(element, entry: &entry, depth: depth)
        }
        let target: FieldCapture.Target
        switch name.localName {
        case "title": target = .title
        case "link": target = .link
        case "description": target = .summary
        case "pubDate": target = .published
        case "guid": target = .guid(isPermaLink: element.attribute("isPermaLink")?.lowercased() != "false")
        case "enclosure":
            if let url = element.attribute("url") {
                entry.add(ImageCandidate(kind: .enclosure, url: url, mimeType: element.attribute("type")))
            }
            return nil
        default: return nil
        }
        return FieldCapture(target, depth: depth, line: element.line)
    }

    /// A child of the channel starts: its `title`, `link` or (RSS 0.91–2.0)
    /// `ttl`, if it is one.
    static func channelChildStarted(_ element: XMLStartElement, format: FeedFormat, depth: Int) -> FieldCapture? {
        if isOwn(element.name, "title", format: format) { return FieldCapture(.feedTitle, depth: depth, line: element.line) }
        if isOwn(element.name, "link", format: format) { return FieldCapture(.feedLink, depth: depth, line: element.line) }
        if format == .rss && element.name.is("ttl", in: nil) { return FieldCapture(.feedTTL, depth: depth, line: element.line) }
        return nil
    }

    /// Whether a child of the channel is RSS's `skipHours` or `skipDays`,
    /// whose `hour`s or `day`s are read one by one.
    static func isSkipList(_ element: XMLStartElement, format: FeedFormat) -> Bool {
        format == .rss && (element.name.is("skipHours", in: nil) || element.name.is("skipDays", in: nil))
    }

    /// A child of the skip list `list` (`skipHours` or `skipDays`) starts:
    /// the `hour` or `day` to read, if it is the one that list holds.
    static func skipChildStarted(_ element: XMLStartElement, in list: String, depth: Int) -> FieldCapture? {
        switch list {
        case "skipHours" where element.name.is("hour", in: nil): return FieldCapture(.skipHour, depth: depth, line: element.line)
        case "skipDays" where element.name.is("day", in: nil): return FieldCapture(.skipDay, depth: depth, line: element.line)
        default: return nil
        }
    }
}
