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

    /// One rendering, prepared as a whole response, plain and (once a client
    /// that accepts gzip has asked for it) gzipped; with where its page sits,
    /// so a reader served from here is still tracked.
    struct Rendering: Sendable {
        var plain: PreparedResponse
        /// The gzipped response, once made; nil before, or when gzip did not make it smaller.
        var gzipped: PreparedResponse?
        /// Whether compressing was tried: a page is compressed at most once.
        var compressed = false
        var number = 1
        var older: Cursor?
        var newer: Cursor?

        /// The HTML, uncompressed.
        var html: ResponseBytes { plain.response.body }

        init(html: [UInt8], number: Int, page: Page) {
            self.init(html: html)
            self.number = number
            older = page.older
            newer = page.newer
        }

        init(html bytes: [UInt8]) {
            plain = PreparedResponse(.html(200, ResponseBytes(bytes), headers: FeedRoutes.pageHeaders))!
        }

        /// The gzip level: chosen by measurement (BENCHMARKS.md, "Compression of a cold page").
        static let gzipLevel: Int32 = 1

        /// This rendering with its gzipped response made (a cold page pays for
        /// compression only when a client that accepts gzip asks for it).
        func compressing() -> Rendering {
            guard !compressed else { return self }
            var rendering = self
            rendering.compressed = true
            let packed = html.withUnsafeBytes { Gzip.compress($0, level: Self.gzipLevel) }
            if !packed.isEmpty, packed.count < html.count {
                rendering.gzipped = PreparedResponse(.html(200, ResponseBytes(packed), headers: FeedRoutes.pageHeaders + [HTTPField("Content-Encoding", "gzip")]))
            }
            return rendering
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
        // The evicted renderings are let go after the lock: freeing their
        // responses inside it made every other page wait (a fifth of the CPU
        // went to the contended lock under random deep pages).
        let evicted = entries.withLock { $0.insert(rendering, for: key, cost: rendering.cost) }
        withExtendedLifetime(evicted) {}
    }

    /// Entries and bytes kept now.
    var usage: (entries: Int, bytes: Int) {
        entries.withLock { ($0.count, $0.totalCost) }
    }
}
