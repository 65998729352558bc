import CXML2

/// The C callbacks handed to libxml2, and the SAX handler table made of them.
///
/// They are `static let`s of a type that is not actor-isolated (see
/// docs/C-INTEROP.md). libxml2 calls them only from inside `xmlParseChunk` and
/// `xmlCreatePushParserCtxt`, which `XMLStreamParser` calls on the caller's
/// thread. `context` is always the `XMLStreamParser`, passed unretained: the
/// parser frees libxml2's context before it goes, so it is alive whenever
/// libxml2 can call.
enum XMLStreamCallbacks {
    /// The SAX2 handler table. libxml2 copies it into each parser context.
    ///
    /// What is left nil is not done at all: no tree is built, no DTD is kept
    /// (`internalSubset` nil), comments and processing instructions are skipped.
    static func handlers() -> xmlSAXHandler {
        var handlers = xmlSAXHandler()
        handlers.initialized = XML_SAX2_MAGIC
        handlers.startElementNs = startElement
        handlers.endElementNs = endElement
        handlers.characters = characters
        handlers.ignorableWhitespace = characters
        handlers.cdataBlock = characters
        handlers.serror = error
        handlers.getEntity = getEntity
        handlers.getParameterEntity = getParameterEntity
        handlers.entityDecl = entityDecl
        handlers.resolveEntity = resolveEntity
        handlers.externalSubset = externalSubset
        return handlers
    }

    private static func parser(_ context: UnsafeMutableRawPointer?) -> XMLStreamParser? {
        guard let context else { return nil }
        return Unmanaged<XMLStreamParser>.fromOpaque(context).takeUnretainedValue()
    }

    static let startElement: startElementNsSAX2Func = {
        context, localName, prefix, namespaceURI, _, _, attributeCount, _, attributes in
        guard let localName else { return }
        parser(context)?.receiveStart(
            localName: localName, prefix: prefix, namespaceURI: namespaceURI,
            attributes: attributes, attributeCount: Int(attributeCount))
    }

    static let endElement: endElementNsSAX2Func = { context, localName, prefix, namespaceURI in
        guard let localName else { return }
        parser(context)?.receiveEnd(localName: localName, prefix: prefix, namespaceURI: namespaceURI)
    }

    /// Character data, ignorable whitespace and CDATA alike.
    static let characters: charactersSAXFunc = { context, text, length in
        guard let text, length > 0 else { return }
        parser(context)?.receiveText(UnsafeRawBufferPointer(start: text, count: Int(length)))
    }

    /// Errors of the parser context (`serror`).
    static let error: xmlStructuredErrorFunc = { context, error in
        guard let error else { return }
        parser(context)?.receiveError(error.pointee)
    }

    /// Errors libxml2 raises with no parser context (a failed encoding
    /// conversion), routed here on the parsing thread by `wf_xml_listen_to_errors`.
    static let contextFreeError: xmlStructuredErrorFunc = { context, error in
        guard let error else { return }
        parser(context)?.receiveError(error.pointee)
    }

    /// Answers an entity reference: only the HTML names (XML's five never get
    /// here); declared entities are never answered, so never expanded.
    static let getEntity: getEntitySAXFunc = { context, name in
        guard let name else { return nil }
        return parser(context)?.entity(named: name)
    }

    /// Parameter entities (`%name;` in a DTD) are never answered.
    static let getParameterEntity: getParameterEntitySAXFunc = { _, _ in nil }

    /// Entity declarations are dropped. (libxml2 still records internal ones
    /// in a document of its own "for expat compatibility" when a SAX handler
    /// has no document; `getEntity` never looks there, and `close` frees it.)
    static let entityDecl: entityDeclSAXFunc = { _, _, _, _, _, _ in }

    /// Nothing external is ever opened: no entity, no DTD.
    static let resolveEntity: resolveEntitySAXFunc = { _, _, _ in nil }

    /// A DOCTYPE's external subset is not loaded.
    static let externalSubset: externalSubsetSAXFunc = { _, _, _, _ in }
}
