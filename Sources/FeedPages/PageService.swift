import HTTPServer
import WarmfeedCore

/// The feed's pages, rendered: the store, the renderer and the page cache
/// behind one type, taken by the routes (which serve pages) and by pre-warm
/// (which renders the pages ahead of readers). Neither knows which store
/// backend answers.
package final class PageService: Sendable {
    let store: any FeedStore
    package let renderer: PageRenderer
    package let cache: PageCache
    let pageSize: Int
    /// The store, when it reads a page at once on the caller's thread.
    private let immediate: (any ImmediatePages)?
    /// How many batches of previews have been kept so far (see `PreviewKeeper`).
    let previewGeneration: @Sendable () -> Int
    /// Where a page notes the rows it found corrupt, for `RowPreparation` to prepare again.
    package let repairs: RowRepairs

    package init(
        store: any FeedStore, renderer: PageRenderer, cache: PageCache, pageSize: Int, previewGeneration: @escaping @Sendable () -> Int = { 0 },
        repairs: RowRepairs = RowRepairs()
    ) {
        self.previewGeneration = previewGeneration
        self.repairs = repairs
        self.store = store
        self.immediate = store as? any ImmediatePages
        self.renderer = renderer
        self.cache = cache
        self.pageSize = pageSize
    }

    /// The feed's epoch, which cursors must carry.
    var epoch: UInt32 { store.epoch }

    /// The store's revision now: renderings are kept under it.
    package var revision: Int { store.revision }

    /// A rendering already kept, without touching the store; not one that
    /// lacked previews kept since (it is rendered again with them).
    func kept(_ key: PageCache.Key) -> PageCache.Rendering? {
        cache.lookUp(key).flatMap(current)
    }

    private func current(_ rendering: PageCache.Rendering) -> PageCache.Rendering? {
        guard let generation = rendering.awaitingPreviews else { return rendering }
        return generation < previewGeneration() ? nil : rendering
    }

    /// Set at start: revisions count from zero in each process, so a
    /// validator of an earlier run must never match one of this run.
    private let run = UInt64.random(in: 0...UInt64.max)

    /// The validator of a rendering of `key`: what makes its bytes — this
    /// run (its templates, its static files' versions), the store's revision,
    /// the page asked for, document or fragment, and whether rows still
    /// awaited their previews then (and which of them would come). Weak: the
    /// gzipped bytes share it. Made from the key, not the bytes, so a cold
    /// page costs no hash of its HTML; with the process's own hasher (a
    /// validator need only hold within the run, and names it anyway).
    func etag(_ key: PageCache.Key, awaitingPreviews: Int?) -> String {
        var hasher = Hasher()
        hasher.combine(run)
        hasher.combine(key)
        hasher.combine(awaitingPreviews)
        // The 64 bits in 11 digits of 62: with `W/"` and `"` it is 15 bytes, a
        // string Swift keeps inline. (In base 36 it was 17: a heap object to
        // make for each page rendered, and to retain and release, in a cache
        // line of its own, for each page served from the cache.)
        var value = UInt64(bitPattern: Int64(hasher.finalize()))
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 15) { out in
            out[0] = UInt8(ascii: "W")
            out[1] = UInt8(ascii: "/")
            out[2] = UInt8(ascii: "\"")
            for index in 3..<14 {
                let digit = UInt8(value % 62)
                value /= 62
                out[index] = digit < 10 ? 0x30 + digit : digit < 36 ? 0x61 + digit - 10 : 0x41 + digit - 36
            }
            out[14] = UInt8(ascii: "\"")
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// Whether the store reads a page at once, so `renderAtOnce` may be used.
    var rendersAtOnce: Bool { immediate != nil }

    /// Reads and renders the page for `key` (a document or a fragment),
    /// keeping what it rendered; nil when there is no such page. Its rows
    /// come rendered ahead when the templates allow (`PageRenderer.rowTag`).
    ///
    /// What it renders for a reader is kept while the cache has room, and
    /// once it is full only when the page was asked for before, and more often
    /// than the page it would evict (`PageCache.admission`): a page read once,
    /// or as often as every other (a crawler, readers deep in the feed), is not
    /// worth an insert and the eviction of another page. What it renders for
    /// pre-warm (`forPrewarm`) is kept: that is what it is rendered for.
    func render(_ key: PageCache.Key, forPrewarm: Bool = false) async throws -> PageCache.Rendering? {
        let generation = previewGeneration()
        let keep = forPrewarm ? .keep : cache.admission(key)
        let fragmentKey = PageCache.Key(revision: key.revision, kind: .fragment, query: key.query)
        if let kept = cache.rendering(for: fragmentKey).flatMap(current) { return document(key, fragment: kept, keep: keep) }
        let read: PreparedPage? =
            if let tag = renderer.rowTag {
                try await store.preparedPage(key.query.request, size: pageSize, tag: tag)
            } else {
                try await store.page(key.query.request, size: pageSize).map(PreparedPage.init)
            }
        guard let page = read else { return nil }
        return document(key, fragment: fragment(of: page, query: key.query, key: fragmentKey, generation: generation, keep: keep), keep: keep)
    }

    /// `render(_:)` on the caller's thread, for a store that reads at once
    /// (`rendersAtOnce`); nil when there is no such page.
    func renderAtOnce(_ key: PageCache.Key) throws -> PageCache.Rendering? {
        guard let immediate else { preconditionFailure("renderAtOnce needs a store that reads at once") }
        let generation = previewGeneration()
        let keep = cache.admission(key)
        let fragmentKey = PageCache.Key(revision: key.revision, kind: .fragment, query: key.query)
        if let kept = cache.rendering(for: fragmentKey).flatMap(current) { return document(key, fragment: kept, keep: keep) }
        let read: PreparedPage? =
            if let tag = renderer.rowTag {
                try immediate.preparedPageAtOnce(key.query.request, size: pageSize, tag: tag)
            } else {
                try immediate.pageAtOnce(key.query.request, size: pageSize).map(PreparedPage.init)
            }
        guard let page = read else { return nil }
        return document(key, fragment: fragment(of: page, query: key.query, key: fragmentKey, generation: generation, keep: keep), keep: keep)
    }

    /// `render(_:)` on the caller's thread when the store holds the page
    /// where nothing need be waited for (`FeedStore.preparedPageWithoutWaiting`:
    /// a PostgreSQL node's copy); `.some(nil)` when there is no such page;
    /// nil when it cannot, and `render` is awaited.
    func renderWithoutWaiting(_ key: PageCache.Key) throws -> PageCache.Rendering?? {
        guard let tag = renderer.rowTag else { return nil }
        let generation = previewGeneration()
        let fragmentKey = PageCache.Key(revision: key.revision, kind: .fragment, query: key.query)
        if let kept = cache.rendering(for: fragmentKey).flatMap(current) { return document(key, fragment: kept, keep: cache.admission(key)) }
        guard let read = try store.preparedPageWithoutWaiting(key.query.request, size: pageSize, tag: tag) else { return nil }
        guard let page = read else { return .some(nil) }
        let keep = cache.admission(key)
        return document(key, fragment: fragment(of: page, query: key.query, key: fragmentKey, generation: generation, keep: keep), keep: keep)
    }

    /// The fragment of a page, rendered (rows rendered ahead or from their
    /// items: the one way a page's bytes are made), and kept under `key` as `keep` allows.
    private func fragment(of page: PreparedPage, query: PageQuery, key: PageCache.Key, generation: Int, keep: PageCache.Admission) -> PageCache.Rendering {
        // Its corrupt rows were read whole: rendered from their items here, prepared again soon.
        if !page.corrupt.isEmpty { repairs.note(page.corrupt) }
        let number = query.number ?? max(1, (page.firstPosition + pageSize - 1) / pageSize)
        let awaiting = page.awaitingPreviews ? generation : nil
        var fragment = PageCache.Rendering(
            html: renderer.fragment(of: page, query: query, number: number), etag: etag(key, awaitingPreviews: awaiting), number: number,
            older: page.older, newer: page.newer)
        fragment.awaitingPreviews = awaiting
        if !cache.keep(fragment, for: key, as: keep) { fragment.unkept = true }
        return fragment
    }

    /// The rendering `key` asks for: `fragment` itself, or the document
    /// around it (kept as `keep` allows; not when its fragment, just
    /// rendered, was not: one refusal a page).
    private func document(_ key: PageCache.Key, fragment: PageCache.Rendering, keep: PageCache.Admission) -> PageCache.Rendering {
        guard key.kind == .document else { return fragment }
        let html = fragment.html.withUnsafeBytes { renderer.document(fragment: $0, older: fragment.older, newer: fragment.newer, number: fragment.number) }
        var document = PageCache.Rendering(
            html: html,
            etag: etag(key, awaitingPreviews: fragment.awaitingPreviews), number: fragment.number, older: fragment.older, newer: fragment.newer
        )
        document.awaitingPreviews = fragment.awaitingPreviews
        if !cache.keep(document, for: key, as: fragment.unkept ? .refuse : keep) { document.unkept = true }
        return document
    }

    /// `rendering` with its gzipped form made, kept again under `key` so the next client finds it.
    func compressed(_ rendering: PageCache.Rendering, for key: PageCache.Key) -> PageCache.Rendering {
        let compressed = rendering.compressing()
        if !compressed.unkept { cache.keep(compressed, for: key) }
        return compressed
    }
}

extension PageService: PrewarmPages {
    /// Renders the page for pre-warm, kept in the page cache; nil when it no
    /// longer exists. It is rendered as a reader's request renders it
    /// (`render`: rows rendered ahead where the templates allow), so the bytes
    /// kept are those a reader would be given, by construction; the page's
    /// items are read besides, for their thumbnails.
    package func pageForWarming(_ query: PageQuery) async -> (page: Page, number: Int)? {
        let key = PageCache.Key(revision: revision, kind: .fragment, query: query)
        guard let rendering = try? await render(key, forPrewarm: true), let page = try? await store.page(query.request, size: pageSize) else {
            return nil
        }
        return (page, rendering.number)
    }
}
