// WarmfeedCore: the feed and its caches as plain Swift, knowing nothing of C
// or of any database.
//
// The store (the `FeedStore` protocol; `SQLiteStore` is the embedded default,
// `PostgresStore` the cluster's), pages read by keyset cursor or page number, where the
// sentinel sits, the caches' building blocks (`LRUCache`,
// `StripedCache`, `RecencyList`), and the stats seam (`CacheStats`, filled by
// each feature's `StatsPublisher`). None of them reads a clock or does I/O:
// the feature modules hold them, pass `now` from an injected `Uptime`, and
// run the actions they return. Tested without threads or sockets.
