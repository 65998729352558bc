import Gzip
import HTTPServer
import Synchronization
import ThreadSlots
import WarmfeedCore

/// Rendered pages kept in memory, bounded by bytes, in a scan-resistant
/// cache (`StripedCache`): a crawler walking every page once displaces only
/// other once-seen pages, never the pages readers come back to.
///
/// Pages are rendered far more often than they change, so a repeated page is
/// served from here without touching the store or the templates. Keys carry the
/// store's revision: a write makes older renderings unreachable, and they age
/// out. A lookup takes no lock and writes nothing another thread writes (a
/// reference bit aside), and the lookups are counted per thread: every server
/// thread serves cached pages side by side.
package final class PageCache: StatsPublisher, Sendable {
    enum Kind: Hashable, Sendable {
        case document
        case fragment
    }

    struct Key: Hashable, Sendable {
        var revision: Int
        var kind: Kind
        var query: PageQuery

        /// What the sketch counts asks under: the page, document or fragment alike.
        var askHash: Int {
            var hasher = Hasher()
            hasher.combine(revision)
            hasher.combine(query)
            return hasher.finalize()
        }
    }

    /// One rendering, prepared as a whole response, plain and (once a client
    /// that accepts gzip has asked for it) gzipped; with where its page sits,
    /// so a reader served from here is still tracked.
    package struct Rendering: Sendable {
        var plain: PreparedResponse
        /// Its validator (`PageService.etag`), the same for the plain and the gzipped response.
        let etag: String
        /// The gzipped response, once made; nil before, or when gzip did not make it smaller.
        var gzipped: PreparedResponse?
        /// Whether compressing was tried: a page is compressed at most once.
        var compressed = false
        /// Rendered for a reader's miss and not kept (`admission`): its gzipped form is not kept either.
        var unkept = false
        var number = 1
        var older: Cursor?
        var newer: Cursor?
        /// When some row with a picture had no preview yet: the previews'
        /// generation then (a later one means it may have one now).
        var awaitingPreviews: Int?

        /// The HTML, uncompressed.
        var html: ResponseBytes { plain.response.body }

        init(html: [UInt8], etag: String, number: Int, older: Cursor?, newer: Cursor?) {
            self.init(html: html, etag: etag)
            self.number = number
            self.older = older
            self.newer = newer
        }

        init(html bytes: [UInt8], etag: String) {
            self.etag = etag
            var fields = PageHeaders.pageFields
            fields.append(HTTPField(name: .eTag, value: etag))
            plain = PreparedResponse(Response(status: .ok, fields: fields, body: ResponseBytes(bytes)))
        }

        /// The gzip level: libdeflate's fastest, chosen by measurement (docs/benchmarks-history.md, "Compression of a cold page").
        package static let gzipLevel = Gzip.fastLevel

        /// This rendering with its gzipped response made (a cold page pays for
        /// compression only when a client that accepts gzip asks for it).
        func compressing() -> Rendering {
            guard !compressed else { return self }
            var rendering = self
            rendering.compressed = true
            let packed = html.withUnsafeBytes { Gzip.compress($0, level: Self.gzipLevel) }
            if !packed.isEmpty, packed.count < html.count {
                var fields = PageHeaders.pageFields
                fields.append(contentsOf: [HTTPField(name: .eTag, value: etag), HTTPField(name: .contentEncoding, value: "gzip")])
                rendering.gzipped = PreparedResponse(Response(status: .ok, fields: fields, body: ResponseBytes(packed)))
            }
            return rendering
        }

        var cost: Int { plain.response.body.count + (gzipped?.response.body.count ?? 0) + 512 }
    }

    private let entries: StripedCache<Key, Rendering>
    /// Readers' lookups (`lookUp(_:)`): found (counter 0), and not found (1);
    /// renderings of readers' misses not kept (2).
    private let counts = ThreadCounters(count: 3)
    /// How often readers asked for each page lately (TinyLFU's sketch): once
    /// the cache is full, a reader's miss is kept only when its page was asked
    /// for before, and more often than the page it would evict.
    private let sketch = FrequencySketch(counters: PageCache.sketchCounters)
    static let sketchCounters = 1 << 19
    /// Readers' misses when the sketch was last halved.
    private let halvedAt = Atomic<Int>(0)
    /// The misses after which the sketch's counts are halved: about ten times
    /// the pages the cache holds (TinyLFU's sample), so "asked for more
    /// often" means lately.
    private var sampleWindow: Int { max(4096, capacity / 2048) }
    /// Whether the cache is at its budget (an insert evicted): only then must
    /// a page earn its place, as in TinyLFU; below it, every page is kept.
    private let atCapacity = Atomic(false)

    /// The budget in bytes.
    let capacity: Int

    package init(capacityBytes: Int) {
        capacity = capacityBytes
        entries = StripedCache(capacity: capacityBytes)
    }

    func rendering(for key: Key) -> Rendering? {
        entries.value(for: key)
    }

    /// A reader's lookup: the rendering if kept, counted as a hit or a miss.
    func lookUp(_ key: Key) -> Rendering? {
        let found = rendering(for: key)
        counts.add(found != nil ? 0 : 1)
        return found
    }

    /// Readers' lookups so far: found in the cache, and not.
    var lookups: (hits: Int, misses: Int) { (counts.value(0), counts.value(1)) }

    /// Whether, and how, the rendering of a reader's miss is kept.
    enum Admission: Equatable {
        /// The cache has room (or the rendering is pre-warm's): kept.
        case keep
        /// The cache is full and the page was asked for `asked` times lately:
        /// kept over a page asked for less often, or not at all.
        case contend(asked: Int)
        /// The page was asked for once lately: not kept.
        case refuse
    }

    /// How the rendering of a reader's miss of `key` may be kept; the ask is
    /// counted. A refusal is counted as a rendering not kept.
    func admission(_ key: Key) -> Admission {
        let asked = sketch.increment(key.askHash)
        guard atCapacity.load(ordering: .relaxed) else { return .keep }
        if asked >= 2 { return .contend(asked: asked) }
        counts.add(2)
        return .refuse
    }

    /// Renderings of readers' misses not kept so far.
    var notKept: Int { counts.value(2) }

    /// Keeps `rendering` for `key` as `admission` allows; whether it was kept.
    /// A contending rendering refused is counted as not kept.
    @discardableResult
    func keep(_ rendering: Rendering, for key: Key, as admission: Admission = .keep) -> Bool {
        // The evicted renderings are let go after the stripe's lock: freeing
        // their responses inside it made other pages wait.
        let evicted: [Rendering]
        switch admission {
        case .keep:
            evicted = entries.insert(rendering, for: key, cost: rendering.cost)
        case .refuse:
            return false
        case .contend(let asked):
            guard let out = entries.insert(rendering, for: key, cost: rendering.cost, unlessOver: { self.sketch.frequency($0.askHash) >= asked })
            else {
                counts.add(2)
                return false
            }
            evicted = out
        }
        if !evicted.isEmpty, !atCapacity.load(ordering: .relaxed) { atCapacity.store(true, ordering: .relaxed) }
        withExtendedLifetime(evicted) {}
        return true
    }

    /// Lets go of what replaced renderings still hold (`StripedCache.reclaim`),
    /// notes when the cache has room again, and halves the sketch's counts
    /// once its window of misses has passed (TinyLFU's reset); called every few seconds.
    package func reclaim() {
        entries.reclaim()
        if atCapacity.load(ordering: .relaxed), usage.bytes < capacity / 10 * 9 { atCapacity.store(false, ordering: .relaxed) }
        let misses = lookups.misses
        if misses - halvedAt.load(ordering: .relaxed) > sampleWindow {
            sketch.halve()
            halvedAt.store(misses, ordering: .relaxed)
        }
    }

    /// Entries and bytes kept now.
    var usage: (entries: Int, bytes: Int) {
        let usage = entries.usage
        return (usage.count, usage.cost)
    }

    /// The rendered pages' section of the operator's views.
    package func publish(into stats: inout CacheStats) {
        let usage = usage
        stats.pages.entries = usage.entries
        stats.pages.bytes = usage.bytes
        stats.pages.budgetBytes = capacity
        (stats.pageHits, stats.pageMisses) = lookups
        stats.pageNotKept = notKept
        stats.memoryUse.pagesBytes = usage.bytes
    }
}
