// WarmfeedCore: the feed and its caches as plain Swift, knowing nothing of C
// or of any database.
//
// The store (the `FeedStore` protocol; `SQLiteStore` is the embedded default,
// `PostgresStore` the cluster's), pages read by keyset cursor or page number, where the
// sentinel sits, and the pure state machines that make every caching decision:
// `ThumbnailCacheState` (memory, the lookup tiers, originals, the origin),
// `PrewarmPlanner` (which pages to warm ahead of which reader), `LRUCache`.
// None of them locks, reads a clock or does I/O: the services in `Warmfeed`
// hold them behind one lock each, pass `now` from an injected `Uptime`, and
// run the actions they return. Tested without threads or sockets.
