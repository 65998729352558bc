/// Receives what an `XMLStreamParser` reads, in document order, as it reads it.
///
/// The parser calls these methods from inside `feed` and `finish`, on the
/// caller's thread. Nothing passed in outlives the call unless the handler
/// copies it: `text` in particular hands over bytes of libxml2's own buffer.
public protocol XMLStreamHandler: AnyObject {
    /// An element starts.
    func startElement(_ element: XMLStartElement)
    /// The innermost open element ends (`line` is where its end tag was read).
    func endElement(_ name: XMLName, line: Int)
    /// A piece of character data or CDATA as UTF-8, entity references already
    /// replaced. One text node may arrive in many pieces (at chunk
    /// boundaries, around references); pieces are never empty.
    func text(_ utf8: UnsafeRawBufferPointer)
    /// Something was wrong with the document; see `XMLStreamError.severity`
    /// for whether anything was lost.
    func problem(_ error: XMLStreamError)
    /// Read after every event: once `true`, the parser stops for good and
    /// delivers nothing more (how a handler aborts from inside a callback).
    var wantsToStop: Bool { get }
}

extension XMLStreamHandler {
    /// Handlers that never stop early need not say so.
    public var wantsToStop: Bool { false }
}
