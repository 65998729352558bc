// Thumbnails: every thumbnail a reader or pre-warm asks for, made once.
//
// `ThumbnailCacheState` decides (memory, the lookup tiers, originals kept or
// owned by another node, the origin) as a pure state machine;
// `ThumbnailService` holds it behind one lock and runs its actions with the
// tiers (`ThumbnailDiskTier`, the cluster's `SharedTier` on Redis),
// `OriginalStore`, libcurl (`OriginFetcher`) and libvips (`Thumbnailer`);
// `ThumbnailRoutes` answers `/thumbs/`. It publishes its numbers through the
// stats seam and its events through swift-metrics (`ThumbnailMetrics`), and
// knows no sibling feature: pages and pre-warm call it, not the other way.
