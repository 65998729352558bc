import HTMLTemplates
import Thumbnailer

/// How a row paints its picture's preview under the strict CSP (no `style`
/// attribute): each of the preview's two colours is rounded to a palette of
/// 216 (6 levels a channel, each channel within 26 of the picture's) and named
/// by a class, `pa<i>` for the top colour and `pb<i>` for the bottom one;
/// feed.css holds the 432 classes (``css``) and paints `.pv` boxes with a
/// vertical gradient between the two.
package enum PreviewPalette {
    static func index(_ colour: (UInt8, UInt8, UInt8)) -> Int {
        level(colour.0) * 36 + level(colour.1) * 6 + level(colour.2)
    }

    private static func level(_ value: UInt8) -> Int { (Int(value) * 5 + 127) / 255 }

    /// The colour of palette entry `index`, as CSS hex.
    static func hex(_ index: Int) -> String {
        let digits = Array("0369cf")
        return "#" + String([digits[index / 36], digits[index / 6 % 6], digits[index % 6]])
    }

    /// The classes feed.css must hold, one line per layer.
    static var css: String {
        let top = (0..<216).map { ".pa\($0){--a:\(hex($0))}" }.joined()
        let bottom = (0..<216).map { ".pb\($0){--b:\(hex($0))}" }.joined()
        return ".pv{background:linear-gradient(var(--a),var(--b))}\n" + top + "\n" + bottom + "\n"
    }

    /// The classes of a thumbnail box: its preview's, or (before any thumbnail
    /// of it was made) one of 8 colours picked by the item's id.
    static func write(preview: Int64?, id: Int64, into html: inout HTMLBuffer) {
        guard let preview else {
            html.append(raw: "c")
            html.append(Int((UInt64(bitPattern: id) &* 0x9e37_79b9_7f4a_7c15) >> 61))
            return
        }
        let colours = ThumbnailPreview(packed: preview)
        html.append(raw: "pv pa")
        html.append(index(colours.top))
        html.append(raw: " pb")
        html.append(index(colours.bottom))
    }
}
