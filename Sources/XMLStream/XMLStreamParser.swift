import CXML2

/// A streaming XML parser: fed the document in chunks, it calls its handler
/// with each start tag, end tag, piece of text and problem as soon as it has
/// read them, and never holds more of the document than libxml2's look-ahead.
///
/// It is libxml2's SAX2 push parser made safe for documents from strangers:
/// - No DTD is loaded and no external entity is read or fetched (no
///   XML_PARSE_DTDLOAD, no XML_PARSE_NOENT, XML_PARSE_NONET on top, and the
///   SAX handlers that would load something do nothing).
/// - Entity declarations are ignored, so no entity is ever expanded (the
///   billion laughs come to nothing); a reference answers only to XML's five
///   entities and the HTML 4 names (`&eacute;`), see `EntityShelf`; any other
///   is reported and dropped.
/// - libxml2's limits stay on (no XML_PARSE_HUGE): 50,000 bytes for a name,
///   10 MB for an attribute value and for its look-ahead (a CDATA section is
///   held whole until its end). Its push parser has no depth limit, so this
///   one stops at `maxDepth` levels of elements.
/// - Recovery (XML_PARSE_RECOVER) is on. What libxml2 2.9.14 does with it
///   (tested in XMLStreamTests/RecoveryTests): after a bare `&`, an unknown
///   entity, an unquoted or repeated attribute, it reports the error and goes
///   on, and what follows arrives whole. After a mismatched end tag it goes
///   on too, but each end tag then closes the innermost open element
///   whatever its name, so the nesting that follows is off by one. A `<` that
///   starts no tag, content after the root element, and an encoding it
///   cannot convert stop it for good: a `.fatal` problem says so. (Without
///   recovery, libxml2 stops at its first well-formedness error.)
/// - Encodings: see `SourceEncoding`.
///
/// One parser reads one document, on one thread at a time.
public final class XMLStreamParser {
    let handler: any XMLStreamHandler
    /// The deepest nesting read; a deeper element stops the parser.
    public let maxDepth: Int
    /// libxml2's parser, made when the encoding is known, freed by `close()`
    /// exactly once (at `finish`, or in `deinit`).
    var context: xmlParserCtxtPtr?
    let entities = EntityShelf()
    /// The qualified names of the open elements, innermost last.
    var openElements: [String] = []
    /// Stopped by the handler or by the depth limit, not by libxml2.
    var stoppedOnPurpose = false
    var isTerminating = false
    var sawElement = false
    var sawConversionFailure = false
    var pendingConversionFailure: String?
    /// The first bytes, kept until they show the encoding.
    private var prolog: [UInt8] = []
    private var transcoder: InputTranscoder?
    private var converted: [UInt8] = []
    private var isDone = false

    /// A parser that reports to `handler` (kept until the parser goes) and
    /// stops at elements nested deeper than `maxDepth` (libxml2's own limit
    /// for the parsers that have one).
    public init(handler: any XMLStreamHandler, maxDepth: Int = 256) {
        self.handler = handler
        self.maxDepth = maxDepth
    }

    deinit {
        close()
    }

    /// Whether the parser will deliver nothing more: `finish` was called,
    /// libxml2 gave up on a fatal error, or the handler asked to stop. A
    /// caller reading a large file stops reading then.
    public var isStopped: Bool { isDone }

    /// Reads the next bytes of the document (any length, any boundary).
    public func feed(_ chunk: UnsafeRawBufferPointer) {
        guard !isDone, !chunk.isEmpty else { return }
        if transcoder != nil {
            push(chunk, isFinal: false)
            return
        }
        prolog.append(contentsOf: chunk)
        guard let encoding = SourceEncoding.sniff(prolog, isComplete: false) else { return }
        start(encoding)
    }

    /// Ends the document: reports it cut short if elements are still open,
    /// then frees libxml2's parser.
    public func finish() {
        guard !isDone else { return }
        if transcoder == nil {
            start(SourceEncoding.sniff(prolog, isComplete: true) ?? .utf8)
        }
        push(UnsafeRawBufferPointer(start: nil, count: 0), isFinal: true)
        isTerminating = true
        parse(UnsafeRawBufferPointer(start: nil, count: 0), terminate: true)
        isDone = true
        close()
    }

    /// The line (1-based) libxml2 is on.
    var line: Int {
        guard let input = context?.pointee.input else { return 0 }
        return Int(input.pointee.line)
    }

    /// libxml2's one-time set-up, which is not safe to run on two threads at
    /// once; a static `let` runs it exactly once, whichever thread comes first.
    private static let libraryReady: Void = xmlInitParser()

    private func start(_ encoding: SourceEncoding) {
        Self.libraryReady
        // XML_PARSE_OLDSAX only makes libxml2 ask `getEntity` for `&amp;` and
        // the other predefined entities too (see `entity(named:)`).
        var options = Int32(XML_PARSE_RECOVER.rawValue | XML_PARSE_NONET.rawValue | XML_PARSE_OLDSAX.rawValue)
        if encoding != .declared {
            // The bytes reach libxml2 as UTF-8 whatever the declaration says.
            options |= Int32(XML_PARSE_IGNORE_ENC.rawValue)
        }
        transcoder = InputTranscoder(encoding: encoding)
        var handlers = XMLStreamCallbacks.handlers()
        // The context pointer is this parser, unretained: the parser owns
        // libxml2's context and frees it (`close`) before it goes, and libxml2
        // calls back only from inside `parse`, so the pointer is valid there.
        let me = Unmanaged.passUnretained(self).toOpaque()
        let saved = wf_xml_listen_to_errors(XMLStreamCallbacks.contextFreeError, me)
        context = xmlCreatePushParserCtxt(&handlers, me, nil, 0, nil)
        wf_xml_restore_errors(saved)
        guard let context else {
            report(XMLStreamError(line: 0, message: "libxml2 could not make a parser", severity: .fatal))
            isDone = true
            return
        }
        xmlCtxtUseOptions(context, options)
        let start = prolog
        prolog = []
        start.withUnsafeBytes { push($0, isFinal: false) }
    }

    private func push(_ bytes: UnsafeRawBufferPointer, isFinal: Bool) {
        guard var transcoder, transcoder.encoding != .declared else {
            parse(bytes, terminate: false)
            return
        }
        converted.removeAll(keepingCapacity: true)
        transcoder.convert(bytes, isFinal: isFinal, into: &converted) { repair, line in
            let message = switch repair {
            case .notUTF8: "bytes that are not UTF-8, read as windows-1252"
            case .forbiddenCharacter: "a control character XML does not allow, replaced by U+FFFD"
            }
            report(XMLStreamError(line: line, message: message, severity: .repaired))
        }
        self.transcoder = transcoder
        converted.withUnsafeBytes { parse($0, terminate: false) }
    }

    /// Hands `bytes` to libxml2, which calls back with what it could read.
    private func parse(_ bytes: UnsafeRawBufferPointer, terminate: Bool) {
        guard let context, !isDone, !bytes.isEmpty || terminate else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        let saved = wf_xml_listen_to_errors(XMLStreamCallbacks.contextFreeError, me)
        defer { wf_xml_restore_errors(saved) }
        var offset = 0
        repeat {
            let size = min(bytes.count - offset, 1 << 20)
            let start = bytes.baseAddress.map { ($0 + offset).assumingMemoryBound(to: CChar.self) }
            xmlParseChunk(context, start, Int32(size), terminate ? 1 : 0)
            reportConversionFailure()
            offset += size
            if context.pointee.instate == XML_PARSER_EOF && !terminate {
                isDone = true
                if !stoppedOnPurpose && !sawConversionFailure {
                    report(XMLStreamError(line: line, message: "libxml2 gave up here: nothing after this is read", severity: .fatal))
                }
            }
        } while offset < bytes.count && !isDone
    }

    func report(_ error: XMLStreamError) {
        handler.problem(error)
    }

    /// Frees libxml2's parser and what it made (the document it builds to
    /// keep entity declarations, see `XMLStreamCallbacks`); safe to call twice.
    private func close() {
        guard let context else { return }
        if let document = context.pointee.myDoc {
            xmlFreeDoc(document)
            context.pointee.myDoc = nil
        }
        xmlFreeParserCtxt(context)
        self.context = nil
    }
}
