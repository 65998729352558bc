// Warmfeed: the composition root. It reads the configuration
// (`WarmfeedConfiguration`, `StoreLocation`), opens the store, makes each
// feature — `Thumbnails`, `FeedPages`, `Prewarm`, `FeedIngest`, `DemoOrigin`,
// `Operations` — and wires them: pages tell pre-warm of readers
// (`ReaderTracking`), pre-warm gets pages (`PrewarmPages`) and thumbnails,
// the refresher's new items warm the top, and every part that shows numbers
// is handed to the `CacheObserver` as a `StatsPublisher`. `WarmfeedApp`
// hands `services` to one ServiceGroup, so SIGTERM reaches each. Only this
// module imports every feature.
