/// A template rendered ahead of time with a few fields left open: the bytes
/// of everything that does not change, and the places ("holes") where the
/// open fields go, filled in when the bytes are written out.
///
/// A feed row is rendered once when its item is stored, and each page then
/// copies its rows' bytes, writing only its position, the feed's size and
/// such at the holes: the escaping and the template walk are paid once per
/// item, not once per request.
///
/// A section over an open field is kept open too: its body is rendered
/// ahead between two holes, and shown or skipped when the bytes are written,
/// as the values then say (a feed row's "first of its page" attributes).
///
/// Stored form: `holeCount` (one byte), then per hole its byte offset in the
/// HTML (4 bytes, little-endian), its field (1 byte) and its kind (1 byte:
/// a value raw or escaped, a section's start, shown when the field is present
/// or when it is absent, or a section's end), then the HTML. Offsets ascend.
public enum PreparedHTML {
    /// What a hole is (its kind byte).
    enum HoleKind: UInt8 {
        case raw = 0
        case escaped = 1
        case sectionStart = 2
        case invertedSectionStart = 3
        case sectionEnd = 4
    }

    /// The deepest open sections may nest.
    static let maxDepth = 8

    /// The most holes one rendering may have.
    public static let maxHoles = 32

    /// `template` rendered over `values`, with the `open` fields left as holes;
    /// nil when the template uses an open field other than as a value (a
    /// section over it, say), or has too many holes: such a template cannot be
    /// rendered ahead, and is rendered on each request.
    public static func prepare(_ template: HTMLTemplate, _ values: some TemplateValues, open: Set<Int>) -> [UInt8]? {
        let recorder = HoleRecorder(values, open: open)
        var html = HTMLBuffer(capacity: 1024)
        template.render(recorder, into: &html)
        guard !recorder.misused, recorder.depth == 0, recorder.holes.count <= maxHoles, open.allSatisfy({ $0 <= Int(UInt8.max) }) else { return nil }
        var prepared: [UInt8] = []
        prepared.reserveCapacity(1 + recorder.holes.count * 6 + html.bytes.count)
        prepared.append(UInt8(recorder.holes.count))
        for hole in recorder.holes {
            withUnsafeBytes(of: UInt32(hole.offset).littleEndian) { prepared.append(contentsOf: $0) }
            prepared.append(UInt8(hole.field))
            prepared.append(hole.kind.rawValue)
        }
        prepared.append(contentsOf: html.bytes)
        return prepared
    }

    /// The fields `open` as the bits of a mask for `write` (field n is bit n;
    /// a field past 63 is left out, and so never allowed as a hole).
    public static func mask(_ open: Set<Int>) -> UInt64 {
        open.reduce(0) { $1 >= 0 && $1 < 64 ? $0 | 1 << UInt64($1) : $0 }
    }

    /// Writes `prepared` (as `prepare` made it) into `html`, asking `values`
    /// for each hole's field, and whether each open section shows
    /// (`isPresent`); false, writing nothing, when `prepared` is not in that
    /// form (offsets out of order or past the end, an unknown kind, sections
    /// that do not pair), or names a hole whose field is not in `open`
    /// (`mask(_:)`): stored bytes are read as untrusted, and `values` is only
    /// ever asked for the fields it was prepared to leave open.
    public static func write(_ prepared: UnsafeRawBufferPointer, values: some TemplateValues, open: UInt64, into html: inout HTMLBuffer) -> Bool {
        guard let holeCount = prepared.first.map(Int.init), holeCount <= maxHoles else { return false }
        let start = 1 + holeCount * 6
        guard prepared.count >= start else { return false }
        let body = UnsafeRawBufferPointer(rebasing: prepared[start...])
        // Checked before anything is written: a bad hole writes nothing, and
        // each section's end names the field of the start it closes (the open
        // sections' fields kept a byte each in one word: at most `maxDepth`).
        var depth = 0
        var starts: UInt64 = 0
        var written = 0
        for hole in 0..<holeCount {
            let offset = Int(offset(prepared, hole))
            let field = prepared[1 + hole * 6 + 4]
            guard offset >= written, offset <= body.count, field < 64, open & 1 << UInt64(field) != 0,
                let kind = HoleKind(rawValue: prepared[1 + hole * 6 + 5])
            else { return false }
            switch kind {
            case .raw, .escaped: break
            case .sectionStart, .invertedSectionStart:
                guard depth < maxDepth else { return false }
                starts = starts << 8 | UInt64(field)
                depth += 1
            case .sectionEnd:
                guard depth > 0, starts & 0xFF == UInt64(field) else { return false }
                starts >>= 8
                depth -= 1
            }
            written = offset
        }
        guard depth == 0 else { return false }
        written = 0
        var hole = 0
        while hole < holeCount {
            let offset = Int(offset(prepared, hole))
            html.append(raw: UnsafeRawBufferPointer(rebasing: body[written..<offset]))
            written = offset
            let entry = 1 + hole * 6
            let field = Int(prepared[entry + 4])
            // Every kind was checked above.
            let kind = HoleKind(rawValue: prepared[entry + 5])!
            switch kind {
            case .raw, .escaped:
                values.write(field, into: &html, escaped: kind == .escaped)
            case .sectionStart, .invertedSectionStart:
                if values.isPresent(field) != (kind == .sectionStart) {
                    // Hidden: its body, and the holes inside it, are skipped to its end.
                    var inside = 1
                    while inside > 0 {
                        hole += 1
                        switch HoleKind(rawValue: prepared[1 + hole * 6 + 5])! {
                        case .sectionStart, .invertedSectionStart: inside += 1
                        case .sectionEnd: inside -= 1
                        case .raw, .escaped: break
                        }
                    }
                    written = Int(Self.offset(prepared, hole))
                }
            case .sectionEnd: break
            }
            hole += 1
        }
        html.append(raw: UnsafeRawBufferPointer(rebasing: body[written...]))
        return true
    }

    private static func offset(_ prepared: UnsafeRawBufferPointer, _ hole: Int) -> UInt32 {
        let entry = 1 + hole * 6
        return UInt32(prepared[entry]) | UInt32(prepared[entry + 1]) << 8 | UInt32(prepared[entry + 2]) << 16 | UInt32(prepared[entry + 3]) << 24
    }
}

/// The values a template is prepared over, noting where the open fields go
/// instead of writing them.
private final class HoleRecorder<Values: TemplateValues>: TemplateValues {
    struct Hole {
        var offset: Int
        var field: Int
        var kind: PreparedHTML.HoleKind
    }

    let values: Values
    let open: Set<Int>
    var holes: [Hole] = []
    /// An open field was asked for other than as a value or a section's.
    var misused = false
    /// Open sections begun and not yet ended.
    var depth = 0

    init(_ values: Values, open: Set<Int>) {
        self.values = values
        self.open = open
    }

    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
        if open.contains(field) {
            holes.append(Hole(offset: html.bytes.count, field: field, kind: escaped ? .escaped : .raw))
        } else {
            values.write(field, into: &html, escaped: escaped)
        }
    }

    func isPresent(_ field: Int) -> Bool {
        if open.contains(field) { misused = true }
        return values.isPresent(field)
    }

    /// A section over an open field: its body is rendered between two holes
    /// (past `maxDepth` nested ones, the template cannot be prepared).
    func sectionBegins(_ field: Int, inverted: Bool, at offset: Int) -> Bool? {
        guard open.contains(field) else { return nil }
        if depth == PreparedHTML.maxDepth { misused = true }
        depth += 1
        holes.append(Hole(offset: offset, field: field, kind: inverted ? .invertedSectionStart : .sectionStart))
        return true
    }

    func sectionEnds(_ field: Int, at offset: Int) {
        guard open.contains(field) else { return }
        depth -= 1
        holes.append(Hole(offset: offset, field: field, kind: .sectionEnd))
    }

    func count(of field: Int) -> Int {
        if open.contains(field) { misused = true }
        return values.count(of: field)
    }

    func element(of field: Int, at index: Int) -> any TemplateValues {
        // Inside a nested section the names are another schema's: the holes
        // are only the prepared template's own fields.
        misused = true
        return values.element(of: field, at: index)
    }
}
