import CXML2

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The entities a parser's `getEntity` hands libxml2 for HTML names
/// (`&eacute;`), made on first use and freed with the parser.
///
/// libxml2 delivers an entity of type "predefined" (like `&lt;`) as plain
/// character data, nothing parsed or expanded, which is what these are in
/// content. In an attribute value, though, libxml2 2.9.14 copies only the
/// first byte of a predefined entity, which breaks every name that is not
/// ASCII; so in start tags the shelf answers with an internal general entity
/// instead, which libxml2 leaves in the value as `&eacute;` (it expands no
/// entity without XML_PARSE_NOENT), and `AttributeText` decodes it. The
/// shelf's entities are the parser's own: libxml2 writes into them (the
/// `checked` bookkeeping), so they are not shared between parsers.
final class EntityShelf {
    private var inContent: [String: UnsafeMutablePointer<xmlEntity>] = [:]
    private var inAttributes: [String: UnsafeMutablePointer<xmlEntity>] = [:]

    /// The entity for `name` as content or inside an attribute value, or nil
    /// when `name` is not an HTML name.
    func entity(named name: String, inAttribute: Bool) -> UnsafeMutablePointer<xmlEntity>? {
        if let made = inAttribute ? inAttributes[name] : inContent[name] { return made }
        guard let codePoint = HTMLEntities.codePoints[name], let scalar = Unicode.Scalar(codePoint) else { return nil }
        let entity = Self.make(name: name, text: String(scalar), predefined: !inAttribute)
        if inAttribute { inAttributes[name] = entity } else { inContent[name] = entity }
        return entity
    }

    deinit {
        for entity in inContent.values { Self.destroy(entity) }
        for entity in inAttributes.values { Self.destroy(entity) }
    }

    private static func make(name: String, text: String, predefined: Bool) -> UnsafeMutablePointer<xmlEntity> {
        let entity = UnsafeMutablePointer<xmlEntity>.allocate(capacity: 1)
        entity.initialize(to: xmlEntity())
        entity.pointee.type = XML_ENTITY_DECL
        entity.pointee.name = UnsafePointer(copy(name))
        entity.pointee.content = copy(text)
        entity.pointee.orig = copy(text)
        entity.pointee.length = Int32(text.utf8.count)
        entity.pointee.etype = predefined ? XML_INTERNAL_PREDEFINED_ENTITY : XML_INTERNAL_GENERAL_ENTITY
        // As libxml2's own predefined entities: checked, nothing inside.
        entity.pointee.checked = predefined ? 1 : 0
        return entity
    }

    private static func copy(_ text: String) -> UnsafeMutablePointer<xmlChar> {
        UnsafeMutableRawPointer(strdup(text)!).assumingMemoryBound(to: xmlChar.self)
    }

    private static func destroy(_ entity: UnsafeMutablePointer<xmlEntity>) {
        free(UnsafeMutableRawPointer(mutating: entity.pointee.name))
        free(entity.pointee.content)
        free(entity.pointee.orig)
        entity.deinitialize(count: 1)
        entity.deallocate()
    }
}
