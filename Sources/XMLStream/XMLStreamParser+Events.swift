import CXML2

/// What the C callbacks hand over, turned into Swift values for the handler.
extension XMLStreamParser {
    /// The most attributes delivered for one element. A start tag can be
    /// 10 MB long, two million attributes that feeds never have.
    static let attributeLimit = 256

    func receiveStart(
        localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, namespaceURI: UnsafePointer<xmlChar>?,
        attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?, attributeCount: Int
    ) {
        guard openElements.count < maxDepth else {
            stop(reporting: "elements nested more than \(maxDepth) deep: nothing after this is read")
            return
        }
        let name = Self.name(localName, prefix, namespaceURI)
        var decoded: [XMLAttribute] = []
        if attributeCount > Self.attributeLimit {
            report(
                XMLStreamError(
                    line: line, message: "<\(name.qualifiedName)> has \(attributeCount) attributes: only the first \(Self.attributeLimit) are read",
                    severity: .error))
        }
        if let attributes, attributeCount > 0 {
            decoded.reserveCapacity(min(attributeCount, Self.attributeLimit))
            // Five pointers an attribute: local name, prefix, URI, value start, value end.
            for index in 0..<min(attributeCount, Self.attributeLimit) {
                let fields = attributes + index * 5
                guard let local = fields[0], let start = fields[3], let end = fields[4] else { continue }
                let value = AttributeText.decode(UnsafeBufferPointer(start: start, count: end - start))
                decoded.append(XMLAttribute(name: Self.name(local, fields[1], fields[2]), value: value))
            }
        }
        openElements.append(name.qualifiedName)
        sawElement = true
        handler.startElement(XMLStartElement(name: name, attributes: decoded, line: line))
        checkStop()
    }

    func receiveEnd(localName: UnsafePointer<xmlChar>, prefix: UnsafePointer<xmlChar>?, namespaceURI: UnsafePointer<xmlChar>?) {
        if !openElements.isEmpty { openElements.removeLast() }
        handler.endElement(Self.name(localName, prefix, namespaceURI), line: line)
        checkStop()
    }

    func receiveText(_ text: UnsafeRawBufferPointer) {
        handler.text(text)
        checkStop()
    }

    func receiveError(_ error: xmlError) {
        let domain = Int(error.domain)
        // libxml2 follows a failed conversion with "I/O error: encoder error";
        // the conversion error said it already.
        if domain == Int(XML_FROM_IO.rawValue) && error.code == Int32(XML_IO_ENCODER.rawValue) { return }
        let raw = error.message.map { String(cString: $0) } ?? "unknown error"
        if domain == Int(XML_FROM_I18N.rawValue) {
            noteConversionFailure(raw)
            return
        }
        var message = XMLStreamError.plainMessage(code: error.code, raw: raw)
        if error.code == Int32(XML_ERR_DOCUMENT_END.rawValue) {
            if !isTerminating {
                message = "more content after the end of the root element"
            } else if let innermost = openElements.last {
                message = "the document ends inside <\(innermost)>: it is cut short"
            } else if !sawElement {
                message = "the document is empty: no XML element"
            }
        }
        let severity: XMLStreamError.Severity =
            switch error.level {
            case XML_ERR_WARNING: .warning
            case XML_ERR_ERROR: .error
            default: isTerminating ? .fatal : .error
            }
        report(
            XMLStreamError(
                line: error.line > 0 ? Int(error.line) : line, column: error.int2 > 0 ? Int(error.int2) : nil,
                message: message, severity: severity, isNamespaceError: domain == Int(XML_FROM_NAMESPACE.rawValue),
                code: Int(error.code)))
        checkStop()
    }

    /// libxml2's converter for the declared encoding met bytes it cannot
    /// decode. It raises this with no parser context, while the bytes are
    /// pushed (before the text in front of them is parsed), and again later;
    /// the text stops there. Reported once, when `parse` has let libxml2 read
    /// up to the bad bytes, so the line is theirs.
    private func noteConversionFailure(_ raw: String) {
        guard !sawConversionFailure else { return }
        sawConversionFailure = true
        let bytes = raw.firstRange(of: "bytes ").map { " (" + String(raw[$0.lowerBound...]).trimmingTrailingNewlines() + ")" } ?? ""
        pendingConversionFailure = "text the declared encoding cannot decode\(bytes): nothing after this is read"
    }

    /// `getEntity`: XML's five entities, or an HTML name in an attribute
    /// value or anywhere else (libxml2 2.9.14 sets `instate` to
    /// XML_PARSER_ATTRIBUTE_VALUE while it reads one).
    ///
    /// After any error libxml2 drops every entity reference, `&amp;` too, for
    /// as long as the context's `wellFormed` is 0 (`xmlParseReference` returns
    /// early); so everything it recovers after a bare `&` would lose its
    /// entities. The flag is set back here, where libxml2 asks for an entity
    /// and checks the flag right after: XML_PARSE_OLDSAX makes it ask for the
    /// five predefined ones too. Nothing else a SAX parser does depends on the
    /// flag (no tree is built), and errors are reported to the handler as
    /// they happen.
    func entity(named name: UnsafePointer<xmlChar>) -> xmlEntityPtr? {
        guard let context else { return nil }
        context.pointee.wellFormed = 1
        if let predefined = xmlGetPredefinedEntity(name) { return predefined }
        let state = context.pointee.instate
        let inAttribute = state == XML_PARSER_ATTRIBUTE_VALUE || state == XML_PARSER_START_TAG
        return entities.entity(named: String(cString: name), inAttribute: inAttribute)
    }

    private func checkStop() {
        guard !stoppedOnPurpose, handler.wantsToStop, let context else { return }
        stoppedOnPurpose = true
        xmlStopParser(context)
    }

    /// Stops libxml2 from inside a callback, with a last problem saying why.
    private func stop(reporting message: String) {
        guard !stoppedOnPurpose, let context else { return }
        stoppedOnPurpose = true
        xmlStopParser(context)
        report(XMLStreamError(line: line, message: message, severity: .fatal))
    }

    /// Reports a conversion failure noted while libxml2 was reading.
    func reportConversionFailure() {
        guard let message = pendingConversionFailure else { return }
        pendingConversionFailure = nil
        report(XMLStreamError(line: line, message: message, severity: .fatal))
    }

    private static func name(
        _ localName: UnsafePointer<xmlChar>, _ prefix: UnsafePointer<xmlChar>?, _ namespaceURI: UnsafePointer<xmlChar>?
    ) -> XMLName {
        XMLName(
            localName: String(cString: localName), namespaceURI: namespaceURI.map { String(cString: $0) },
            prefix: prefix.map { String(cString: $0) })
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while let last = text.last, last.isNewline || last == " " { text.removeLast() }
        return String(text)
    }
}
