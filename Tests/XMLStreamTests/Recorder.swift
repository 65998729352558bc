import XMLStream

/// A handler that writes down everything, text pieces joined.
final class Recorder: XMLStreamHandler {
    enum Event: Equatable {
        case start(XMLStartElement)
        case end(String)
        case text(String)
    }

    var events: [Event] = []
    var problems: [XMLStreamError] = []
    var stopAfterElements: Int?
    private var pendingText: [UInt8] = []
    private var starts = 0

    func startElement(_ element: XMLStartElement) {
        flushText()
        starts += 1
        events.append(.start(element))
    }

    func endElement(_ name: XMLName, line: Int) {
        flushText()
        events.append(.end(name.qualifiedName))
    }

    func text(_ utf8: UnsafeRawBufferPointer) {
        pendingText.append(contentsOf: utf8)
    }

    func problem(_ error: XMLStreamError) {
        problems.append(error)
    }

    var wantsToStop: Bool { stopAfterElements.map { starts >= $0 } ?? false }

    func flushText() {
        guard !pendingText.isEmpty else { return }
        events.append(.text(String(decoding: pendingText, as: UTF8.self)))
        pendingText.removeAll()
    }

    /// All text delivered, joined.
    var allText: String {
        events.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
    }

    /// All attribute values delivered, joined.
    var allAttributeValues: String {
        events.compactMap { if case .start(let element) = $0 { element.attributes.map(\.value).joined() } else { nil } }
            .joined()
    }

    var startedElements: [XMLStartElement] {
        events.compactMap { if case .start(let element) = $0 { element } else { nil } }
    }

    /// Text events that are not whitespace only.
    var texts: [String] {
        events.compactMap {
            if case .text(let text) = $0, !text.allSatisfy(\.isWhitespace) { text } else { nil }
        }
    }

    /// Problems that lose something (not repairs, not warnings).
    var errors: [XMLStreamError] { problems.filter { $0.severity >= .error } }
}

/// Parses `bytes` fed in chunks of `chunkSize`.
func record(_ bytes: [UInt8], chunkSize: Int = 1 << 16, stopAfterElements: Int? = nil) -> Recorder {
    let recorder = Recorder()
    recorder.stopAfterElements = stopAfterElements
    let parser = XMLStreamParser(handler: recorder)
    var start = 0
    while start < bytes.count {
        let end = min(bytes.count, start + chunkSize)
        bytes[start..<end].withUnsafeBytes { parser.feed($0) }
        start = end
    }
    parser.finish()
    recorder.flushText()
    return recorder
}

func record(_ text: String, chunkSize: Int = 1 << 16, stopAfterElements: Int? = nil) -> Recorder {
    record(Array(text.utf8), chunkSize: chunkSize, stopAfterElements: stopAfterElements)
}
