import Gzip
import HTTPServer
import Synchronization
import WarmfeedCore

/// Rendered pages kept in memory, bounded by bytes, in a segmented LRU: a
/// crawler walking every page once displaces only other once-seen pages, never
/// the pages readers come back to.
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
        /// When some row with a picture had no preview yet: the previews'
        /// generation then (a later one means it may have one now).
        var awaitingPreviews: Int?

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

    private let entries: Mutex<SegmentedLRU<Key, Rendering>>
    /// Readers' lookups (`lookUp(_:)`): found, and not found.
    private let counts = Mutex((hits: 0, misses: 0))

    /// The budget in bytes.
    let capacity: Int

    init(capacityBytes: Int) {
        capacity = capacityBytes
        entries = Mutex(SegmentedLRU(capacity: capacityBytes))
    }

    func rendering(for key: Key) -> Rendering? {
        entries.withLock { $0.value(for: key) }
    }

    /// A reader's lookup: the rendering if kept, counted as a hit or a miss.
    func lookUp(_ key: Key) -> Rendering? {
        let found = rendering(for: key)
        counts.withLock { if found != nil { $0.hits += 1 } else { $0.misses += 1 } }
        return found
    }

    /// Readers' lookups so far: found in the cache, and not.
    var lookups: (hits: Int, misses: Int) { counts.withLock { $0 } }

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
