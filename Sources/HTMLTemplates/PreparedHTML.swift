/// A template rendered ahead of time with a few fields left open: the bytes
/// of everything that does not change, and the places ("holes") where the
/// open fields go, filled in when the bytes are written out.
///
/// A feed row is rendered once when its item is stored, and each page then
/// copies its rows' bytes, writing only its position, the feed's size and
/// such at the holes: the escaping and the template walk are paid once per
/// item, not once per request.
///
/// Stored form: `holeCount` (one byte), then per hole its byte offset in the
/// HTML (4 bytes, little-endian), its field (1 byte) and whether it is escaped
/// (1 byte), then the HTML. Offsets ascend.
public enum PreparedHTML {
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
        guard !recorder.misused, recorder.holes.count <= maxHoles, open.allSatisfy({ $0 <= Int(UInt8.max) }) else { return nil }
        var prepared: [UInt8] = []
        prepared.reserveCapacity(1 + recorder.holes.count * 6 + html.bytes.count)
        prepared.append(UInt8(recorder.holes.count))
        for hole in recorder.holes {
            withUnsafeBytes(of: UInt32(hole.offset).littleEndian) { prepared.append(contentsOf: $0) }
            prepared.append(UInt8(hole.field))
            prepared.append(hole.escaped ? 1 : 0)
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
    /// for each hole's field; false, writing nothing, when `prepared` is not
    /// in that form, or names a hole whose field is not in `open` (`mask(_:)`):
    /// stored bytes are read as untrusted, and `values` is only ever asked
    /// for the fields it was prepared to leave open.
    public static func write(_ prepared: UnsafeRawBufferPointer, values: some TemplateValues, open: UInt64, into html: inout HTMLBuffer) -> Bool {
        guard let holeCount = prepared.first.map(Int.init), holeCount <= maxHoles else { return false }
        let start = 1 + holeCount * 6
        guard prepared.count >= start else { return false }
        let body = UnsafeRawBufferPointer(rebasing: prepared[start...])
        var written = 0
        // Checked before anything is written: a bad hole writes nothing.
        for hole in 0..<holeCount {
            let offset = Int(offset(prepared, hole))
            let field = prepared[1 + hole * 6 + 4]
            guard offset >= written, offset <= body.count, field < 64, open & 1 << UInt64(field) != 0 else { return false }
            written = offset
        }
        written = 0
        for hole in 0..<holeCount {
            let offset = Int(offset(prepared, hole))
            html.append(raw: UnsafeRawBufferPointer(rebasing: body[written..<offset]))
            let entry = 1 + hole * 6
            values.write(Int(prepared[entry + 4]), into: &html, escaped: prepared[entry + 5] != 0)
            written = offset
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
        var escaped: Bool
    }

    let values: Values
    let open: Set<Int>
    var holes: [Hole] = []
    /// An open field was asked for other than as a value.
    var misused = false

    init(_ values: Values, open: Set<Int>) {
        self.values = values
        self.open = open
    }

    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
        if open.contains(field) {
            holes.append(Hole(offset: html.bytes.count, field: field, escaped: escaped))
        } else {
            values.write(field, into: &html, escaped: escaped)
        }
    }

    func isPresent(_ field: Int) -> Bool {
        if open.contains(field) { misused = true }
        return values.isPresent(field)
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
