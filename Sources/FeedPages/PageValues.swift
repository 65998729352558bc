import HTMLTemplates
import WarmfeedCore

/// What the page templates are given, as schemas (checked when the templates
/// load) and as values read by field number while a page renders. The field
/// order of each schema is the order of its `Field` cases.
package enum PageValues {
    enum RowField: Int { case id, position, total, title, colour, iso, date, summary, thumb, link, pageStart, number, url, picture, source, site }
    enum SentinelField: Int { case next, fragment, nextNumber }
    enum EndField: Int { case empty }
    enum PageField: Int { case before, sentinel, after, end }
    enum LayoutField: Int { case title, css, js, newer, next, nextNumber, pageNumber, fragment }

    static let row = TemplateSchema([
        "id": .text, "position": .text, "total": .text, "title": .text, "colour": .text, "iso": .text, "date": .text,
        "summary": .text, "thumb": .flag, "link": .text, "pageStart": .flag, "number": .text, "url": .text, "picture": .text,
        "source": .text, "site": .text,
    ])
    static let sentinel = TemplateSchema(["next": .text, "fragment": .text, "nextNumber": .text])
    static let end = TemplateSchema(["empty": .flag])
    static let page = TemplateSchema(["before": .list(row), "sentinel": .object(sentinel), "after": .list(row), "end": .object(end)])
    static let layout = TemplateSchema([
        "title": .text, "css": .text, "js": .text, "newer": .text, "next": .text, "nextNumber": .text, "pageNumber": .text, "fragment": .text,
    ])
    /// The error page, rendered rarely: given `TemplateData`.
    static let error = TemplateSchema(["status": .text, "reason": .text, "message": .text, "css": .text])
}

/// What the page template needs of a page's rows (`PreparedRows`: rows
/// rendered ahead, or rendered from their items, in one page).
protocol FragmentRows: AnyObject {
    var rowCount: Int { get }
    var number: Int { get }
    /// Rows before the sentinel.
    var split: Int { get }
    /// The next page's document and fragment URLs; nil on the last page.
    var next: (document: String, fragment: String)? { get }
    func row(at offset: Int) -> any TemplateValues
}

/// One page's rows, split around its sentinel (or followed by the end row).
struct FragmentValues<Rows: FragmentRows>: TemplateValues {
    let rows: Rows

    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {}

    func count(of field: Int) -> Int {
        return switch PageValues.PageField(rawValue: field)! {
        case .before: rows.next == nil ? rows.rowCount : rows.split
        case .after: rows.next == nil ? 0 : rows.rowCount - rows.split
        case .sentinel: rows.next == nil ? 0 : 1
        case .end: rows.next == nil ? 1 : 0
        }
    }

    func element(of field: Int, at index: Int) -> any TemplateValues {
        switch PageValues.PageField(rawValue: field)! {
        case .before: rows.row(at: index)
        case .after: rows.row(at: rows.split + index)
        case .sentinel: SentinelValues(next: rows.next!, number: rows.number + 1)
        case .end: EndValues(empty: rows.rowCount == 0)
        }
    }
}

/// Where a row sits: what its position-dependent fields are written from.
struct RowPlace {
    var position: Int
    var total: Int
    var first: Bool
    /// The page's number and URL: written on its first row only.
    var number: Int
    var url: String
    /// The store's epoch, which the row's picture name carries.
    var epoch: UInt32
}

/// How each field of `row.mustache` is written from an item and its place:
/// one definition for rows rendered on request, rendered ahead, and the holes
/// of rows rendered ahead.
enum RowFields {
    /// The fields a row rendered ahead leaves open, written when a page is served:
    /// its place, its preview's colours (kept after the item is written), and
    /// the page's number and URL with the section that shows them on a page's
    /// first row, so that row too is served from its prepared bytes.
    static let open: Set<Int> = [
        PageValues.RowField.position.rawValue, PageValues.RowField.total.rawValue, PageValues.RowField.colour.rawValue,
        PageValues.RowField.pageStart.rawValue, PageValues.RowField.number.rawValue, PageValues.RowField.url.rawValue,
    ]
    /// `open` as the mask `PreparedHTML.write` checks stored holes against.
    static let openMask = PreparedHTML.mask(open)

    static func write(_ field: Int, of item: UnsafePointer<FeedItem>, place: RowPlace, into html: inout HTMLBuffer, escaped: Bool) {
        switch PageValues.RowField(rawValue: field)! {
        case .id: html.append(Int(item.pointee.id ?? 0))
        case .position: html.append(place.position)
        case .total: html.append(place.total)
        case .title: html.append(item.pointee.title, escaped: escaped)
        case .colour: PreviewPalette.write(preview: item.pointee.preview, id: item.pointee.id ?? 0, into: &html)
        case .iso: Timestamp.writeISO(item.pointee.published, into: &html)
        case .date: Timestamp.writeDisplay(item.pointee.published, into: &html)
        case .summary: html.append(item.pointee.summary, escaped: escaped)
        case .link: if let link = item.pointee.link { html.append(link, escaped: escaped) }
        case .number: if place.first { html.append(place.number) }
        case .url: if place.first { html.append(place.url, escaped: escaped) }
        case .source: if let title = item.pointee.sourceTitle { html.append(Self.shortened(title), escaped: escaped) }
        case .site: if let site = item.pointee.sourceLink { html.append(site, escaped: escaped) }
        case .picture:
            // Thumbnails are asked for by picture: the item's id and its image's tag in this store.
            if let picture = Picture(item: item.pointee, epoch: place.epoch) { html.append(raw: picture.name) }
        case .thumb, .pageStart: break
        }
    }

    /// A source's title as a row shows it: at most 80 characters, so a long one keeps the row's line.
    static func shortened(_ title: String) -> String {
        title.count > 80 ? String(title.prefix(79)) + "…" : title
    }

    static func isPresent(_ field: Int, of item: UnsafePointer<FeedItem>, first: Bool) -> Bool {
        if let shown = isPresent(field, first: first) { return shown }
        return switch PageValues.RowField(rawValue: field)! {
        case .summary: !item.pointee.summary.isEmpty
        case .thumb: item.pointee.imageURL != nil
        case .link: item.pointee.link.map(PageRenderer.isSafeLink) ?? false
        case .source: item.pointee.sourceTitle.map { !$0.isEmpty } ?? false
        case .site: item.pointee.sourceLink.map(PageRenderer.isSafeLink) ?? false
        default: true
        }
    }

    /// Whether a section over `field` shows, when that depends on the row's
    /// place alone (every open field's does: a prepared row asks it of them);
    /// nil when it depends on the item.
    static func isPresent(_ field: Int, first: Bool) -> Bool? {
        switch PageValues.RowField(rawValue: field)! {
        case .summary, .thumb, .link, .source, .site: nil
        case .pageStart, .number, .url: first
        default: true
        }
    }
}

/// An item's row as it is rendered ahead: its place, its colours and what
/// only a page's first row shows left open.
struct AheadRowValues: TemplateValues {
    let item: FeedItem
    let epoch: UInt32

    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
        withUnsafePointer(to: item) { item in
            // The open fields are holes and never asked for; the rest of the place is a later row's.
            RowFields.write(
                field, of: item, place: RowPlace(position: 0, total: 0, first: false, number: 0, url: "", epoch: epoch), into: &html, escaped: escaped)
        }
    }

    func isPresent(_ field: Int) -> Bool {
        withUnsafePointer(to: item) { RowFields.isPresent(field, of: $0, first: false) }
    }
}

/// One page's rows, split around its sentinel, held once while it renders:
/// its rows, their bytes and the items of rows rendered from their items by
/// pointer, valid only inside `PreparedRows.rendering` (a row's values read
/// them with no reference counted, as the template asks a row for each field
/// or hole). Every page is rendered here, whether its rows were rendered
/// ahead (`PreparedPage`) or come as items (`PreparedPage(_: Page)`), so a
/// page's bytes have one way to be made.
final class PreparedRows: FragmentRows {
    let page: PreparedPage
    /// The store's epoch, which the picture names of rows rendered here carry.
    let epoch: UInt32
    let number: Int
    let url: String
    let split: Int
    let next: (document: String, fragment: String)?
    /// The page's rows and their bytes, while `rendering` runs.
    fileprivate let rows: UnsafeBufferPointer<PreparedPage.Row>
    fileprivate let bytes: UnsafeRawBufferPointer
    /// The items of the rows rendered from their items (each row names its
    /// own: `PreparedPage.Row.itemIndex`). Fields are read in place, through
    /// a pointer to the item: copying a row's item to read a field (a retain
    /// and a release of each of its strings) put perf at 15% of the server's
    /// CPU on random deep pages rendered from items.
    fileprivate let items: UnsafeBufferPointer<FeedItem>

    private init(
        page: PreparedPage, rows: UnsafeBufferPointer<PreparedPage.Row>, bytes: UnsafeRawBufferPointer, items: UnsafeBufferPointer<FeedItem>,
        epoch: UInt32, number: Int, url: String, split: Int, next: (document: String, fragment: String)?
    ) {
        self.page = page
        self.rows = rows
        self.bytes = bytes
        self.items = items
        self.epoch = epoch
        self.number = number
        self.url = url
        self.split = split
        self.next = next
    }

    /// `body` given the rows of `page`, for as long as it runs.
    static func rendering<Result>(
        _ page: PreparedPage, epoch: UInt32, number: Int, url: String, split: Int, next: (document: String, fragment: String)?,
        _ body: (PreparedRows) -> Result
    ) -> Result {
        page.rows.withUnsafeBufferPointer { rows in
            page.bytes.withUnsafeBytes { bytes in
                page.items.withUnsafeBufferPointer { items in
                    let held = PreparedRows(
                        page: page, rows: rows, bytes: bytes, items: items, epoch: epoch, number: number, url: url, split: split, next: next)
                    return withExtendedLifetime(held) { body(held) }
                }
            }
        }
    }

    /// The item row `offset` is rendered from; nil when it has prepared bytes.
    fileprivate func item(at offset: Int) -> UnsafePointer<FeedItem>? {
        rows[offset].itemIndex.map { items.baseAddress! + $0 }
    }

    var rowCount: Int { rows.count }
    func row(at offset: Int) -> any TemplateValues { PreparedRowValues(rows: self, offset: offset) }
}

/// A row of a prepared page: its bytes with the holes filled in, or, for
/// rows not prepared, the item rendered field by field.
struct PreparedRowValues: TemplateValues {
    /// Unretained: a row lives only inside the render of its page, which holds
    /// the rows. Read inside `_withUnsafeGuaranteedRef`, not as an
    /// `unowned(unsafe)` reference: each read of one was a retain and a
    /// release, some 150 pairs a page.
    private let held: Unmanaged<PreparedRows>
    let offset: Int

    init(rows: PreparedRows, offset: Int) {
        held = Unmanaged.passUnretained(rows)
        self.offset = offset
    }

    private func row(of rows: PreparedRows) -> UnsafePointer<PreparedPage.Row> { rows.rows.baseAddress! + offset }

    private func place(of rows: PreparedRows) -> RowPlace {
        RowPlace(
            position: rows.page.firstPosition + offset, total: rows.page.total, first: offset == 0, number: rows.number, url: rows.url,
            epoch: rows.epoch)
    }

    func writePrepared(into html: inout HTMLBuffer) -> Bool {
        held._withUnsafeGuaranteedRef { rows in
            let prepared = row(of: rows).pointee.prepared
            guard !prepared.isEmpty else { return false }
            return PreparedHTML.write(UnsafeRawBufferPointer(rebasing: rows.bytes[prepared]), values: self, open: RowFields.openMask, into: &html)
        }
    }

    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
        held._withUnsafeGuaranteedRef { rows in
            // A row rendered from its item, read in place.
            if let item = rows.item(at: offset) {
                RowFields.write(field, of: item, place: place(of: rows), into: &html, escaped: escaped)
                return
            }
            let row = row(of: rows)
            // A hole of the prepared bytes: only the open fields are asked for
            // (`PreparedHTML.write` checked the stored field numbers first).
            switch PageValues.RowField(rawValue: field) {
            case .position: html.append(rows.page.firstPosition + offset)
            case .total: html.append(rows.page.total)
            case .colour: PreviewPalette.write(preview: row.pointee.preview, id: row.pointee.id, into: &html)
            case .number: if offset == 0 { html.append(rows.number) }
            case .url: if offset == 0 { html.append(rows.url, escaped: escaped) }
            default: break
            }
        }
    }

    func isPresent(_ field: Int) -> Bool {
        held._withUnsafeGuaranteedRef { rows in
            // Of the prepared bytes, only open sections are asked about (`PreparedHTML.write`).
            guard let item = rows.item(at: offset) else { return RowFields.isPresent(field, first: offset == 0) ?? false }
            return RowFields.isPresent(field, of: item, first: offset == 0)
        }
    }
}

struct SentinelValues: TemplateValues {
    var next: (document: String, fragment: String)
    var number: Int

    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
        switch PageValues.SentinelField(rawValue: field)! {
        case .next: html.append(next.document, escaped: escaped)
        case .fragment: html.append(next.fragment, escaped: escaped)
        case .nextNumber: html.append(number)
        }
    }
}

struct EndValues: TemplateValues {
    var empty: Bool
    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {}
    func isPresent(_ field: Int) -> Bool { empty }
}

/// The document around a fragment.
struct LayoutValues: TemplateValues {
    var number: Int
    var css: String
    var js: String
    var newer: String?
    var next: String?
    /// The fragment's bytes, written with its first screen's thumbnails marked (`PageRenderer.writeFirstScreen`).
    var fragment: UnsafeRawBufferPointer

    func write(_ field: Int, into html: inout HTMLBuffer, escaped: Bool) {
        switch PageValues.LayoutField(rawValue: field)! {
        case .title:
            html.append(raw: "Warmfeed")
            if number != 1 {
                html.append(raw: " · page ")
                html.append(number)
            }
        case .css: html.append(css, escaped: escaped)
        case .js: html.append(js, escaped: escaped)
        case .newer: if let newer { html.append(newer, escaped: escaped) }
        case .next: if let next { html.append(next, escaped: escaped) }
        case .nextNumber: html.append(number + 1)
        case .pageNumber: html.append(number)
        case .fragment: PageRenderer.writeFirstScreen(fragment, into: &html)
        }
    }

    func isPresent(_ field: Int) -> Bool {
        switch PageValues.LayoutField(rawValue: field)! {
        case .newer: newer != nil
        case .next, .nextNumber: next != nil
        case .pageNumber: number > 1
        default: true
        }
    }
}

extension HTMLBuffer {
    /// Appends `text`, escaped when `escaped`.
    mutating func append(_ text: String, escaped: Bool) {
        if escaped { append(escaped: text) } else { append(raw: text) }
    }
}
