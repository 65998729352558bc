import FeedPages
import Foundation
import Gzip
import HTTPServer
import Logging
import Reckoning
import WarmfeedCore

/// Measures cold page rendering, for `warmfeed measure-render` and `bench/`:
/// how long reading one page from the store and rendering it take, with no
/// page cache in front. Timing lives here, never in tests.
public enum RenderTiming {
    /// Microseconds per page for the store read and for the render, over `pages` random pages.
    public struct Result: Sendable {
        /// Store reads, in microseconds, one per page.
        public var storeMicros: [Double]
        /// Fragment renders, in microseconds, one per page.
        public var renderMicros: [Double]
        /// Compressing each fragment with gzip, in microseconds, and the sizes before and after.
        public var gzipMicros: [Double] = []
        public var plainBytes: [Int] = []
        public var gzipBytes: [Int] = []
    }

    /// Reads and renders `pages` random pages of the configured store.
    public static func measure(configuration: WarmfeedConfiguration, pages: Int, gzipLevel: Int32? = nil) async throws -> Result {
        let store = try await StoreLocation(configuration.store, dataFolder: configuration.dataFolder).open(logger: Logger(label: "warmfeed"))
        let statics = try StaticFiles(folder: configuration.publicFolder)
        let renderer = try PageRenderer(configuration.pages, templatesFolder: configuration.templatesFolder, statics: statics, epoch: store.epoch)
        do {
            let result = try await measure(store, renderer, configuration, pages: pages, gzipLevel: gzipLevel)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    private static func measure(
        _ store: any FeedStore, _ renderer: PageRenderer, _ configuration: WarmfeedConfiguration, pages: Int, gzipLevel: Int32?
    ) async throws -> Result {
        let lastPage = max(1, (try await store.count() + configuration.pages.size - 1) / configuration.pages.size)
        var result = Result(storeMicros: [], renderMicros: [])
        let clock = ContinuousClock()
        for _ in 0..<pages {
            let number = Int.random(in: 1...lastPage)
            let query = PageQuery(request: .number(number), number: number)
            let readStart = clock.now
            guard let page = try await store.page(query.request, size: configuration.pages.size) else { continue }
            let renderStart = clock.now
            let html = renderer.fragment(of: page, query: query, number: number)
            let end = clock.now
            let packed = Gzip.compress(html, level: gzipLevel ?? PageCache.Rendering.gzipLevel)
            let packedEnd = clock.now
            precondition(!html.isEmpty && !packed.isEmpty)
            result.storeMicros.append(micros(renderStart - readStart))
            result.renderMicros.append(micros(end - renderStart))
            result.gzipMicros.append(micros(packedEnd - end))
            result.plainBytes.append(html.count)
            result.gzipBytes.append(packed.count)
        }
        return result
    }

    private static func micros(_ duration: Duration) -> Double {
        duration.inMicroseconds
    }
}
