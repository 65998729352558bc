import Gzip
import HTTPServer
import Synchronization
import WarmfeedCore

/// Rendered pages kept in memory, bounded by bytes, least recently used out first.
///
/// Pages are rendered far more often than they change, so a repeated page is
/// served from here without touching the store or the templates. Keys carry the
/// store's revision: a write makes older renderings unreachable, and they age
/// out of the LRU.
final class PageCache: Sendable {
    enum Kind: Hashable, Sendable {
        case document
        case fragment
    }

    struct Key: Hashable, Sendable {
        var revision: Int
        var kind: Kind
        var query: PageQuery
    }

    /// One rendering, plain and gzipped (compressed once, when it is kept), both
    /// prepared as whole responses; with where its page sits, so a reader served
    /// from here is still tracked.
    struct Rendering: Sendable {
        var plain: PreparedResponse
        var gzipped: PreparedResponse?
        var number = 1
        var older: Cursor?
        var newer: Cursor?

        /// The HTML, uncompressed.
        var html: ResponseBytes { plain.response.body }

        init(html: String, number: Int, page: Page) {
            self.init(html: html)
            self.number = number
            older = page.older
            newer = page.newer
        }

        init(html: String) {
            let bytes = Array(html.utf8)
            let headers = FeedRoutes.pageHeaders
            plain = PreparedResponse(.html(200, ResponseBytes(bytes), headers: headers))!
            let packed = Gzip.compress(bytes, level: 6)
            gzipped = packed.isEmpty || packed.count >= bytes.count
                ? nil
                : PreparedResponse(.html(200, ResponseBytes(packed), headers: headers + [HTTPField("Content-Encoding", "gzip")]))
        }

        var cost: Int { plain.response.body.count + (gzipped?.response.body.count ?? 0) + 512 }
    }

    private let entries: Mutex<LRUCache<Key, Rendering>>

    /// The budget in bytes.
    let capacity: Int

    init(capacityBytes: Int) {
        capacity = capacityBytes
        entries = Mutex(LRUCache(capacity: capacityBytes))
    }

    func rendering(for key: Key) -> Rendering? {
        entries.withLock { $0.value(for: key) }
    }

    func keep(_ rendering: Rendering, for key: Key) {
        entries.withLock { _ = $0.insert(rendering, for: key, cost: rendering.cost) }
    }

    /// Entries and bytes kept now.
    var usage: (entries: Int, bytes: Int) {
        entries.withLock { ($0.count, $0.totalCost) }
    }
}
