import HTTPServer
import WarmfeedCore

/// The page a request's query names: `?page=N`, optionally with `after=` or
/// `before=` a cursor. Checked strictly, because every malformed value must get
/// a clear 4xx rather than a guess.
package struct PageQuery: Sendable, Hashable, BitwiseCopyable {
    /// What to read from the store.
    package var request: PageRequest
    /// The page number shown to the reader, when the URL gave one.
    package var number: Int?

    package init(request: PageRequest, number: Int?) {
        self.request = request
        self.number = number
    }

    /// The largest page number accepted (a feed of 10^9 items at 10 a page).
    static let maxPage = 100_000_000

    /// Why a query was refused.
    typealias Problem = HTTPProblem

    /// Reads the page from `query`, checking cursors against the feed's `epoch`.
    /// Every page request passes here: the pairs are read in one pass, with nothing allocated.
    static func parse(_ query: [QueryItem], epoch: UInt32) throws(Problem) -> PageQuery {
        var page: String?
        var after: String?
        var before: String?
        var twice: (page: Bool, cursor: Bool) = (false, false)
        for item in query {
            switch item.name {
            case "page": if page != nil { twice.page = true } else { page = item.value }
            case "after": if after != nil { twice.cursor = true } else { after = item.value }
            case "before": if before != nil { twice.cursor = true } else { before = item.value }
            default: break
            }
        }
        guard !twice.page else { throw Problem(status: 400, message: "page is given more than once") }
        guard !twice.cursor else { throw Problem(status: 400, message: "a cursor is given more than once") }
        guard after == nil || before == nil else { throw Problem(status: 400, message: "give either after or before, not both") }

        var number: Int?
        if let raw = page {
            guard !raw.isEmpty, raw.utf8.count <= 9, raw.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(raw), (1...maxPage).contains(value)
            else {
                throw Problem(status: 400, message: "page must be a whole number from 1 to \(maxPage), not \"\(raw.prefix(40))\"")
            }
            number = value
        }
        if let token = after ?? before {
            let cursor: Cursor
            do {
                cursor = try Cursor.parse(token, epoch: epoch)
            } catch .malformed {
                throw Problem(status: 400, message: "the cursor is malformed or truncated")
            } catch {
                throw Problem(status: 410, message: "the cursor belongs to another version of this feed; start again from the top")
            }
            return PageQuery(request: after == nil ? .before(cursor) : .after(cursor), number: number)
        }
        return PageQuery(request: .number(number ?? 1), number: number ?? 1)
    }

    /// The document URL of this page.
    var documentURL: String { "/" + query }

    /// The fragment URL of this page.
    var fragmentURL: String { "/fragment" + query }

    /// Both URLs, the query (and its cursor's token) made once.
    var urls: (document: String, fragment: String) {
        let query = query
        return ("/" + query, "/fragment" + query)
    }

    /// The URLs' query, with its "?"; empty for page 1.
    private var query: String {
        switch request {
        case .number(let number): number == 1 ? "" : "?page=\(number)"
        case .after(let cursor): "?page=\(number ?? 2)&after=\(cursor.token)"
        case .before(let cursor): "?page=\(number ?? 1)&before=\(cursor.token)"
        }
    }
}
