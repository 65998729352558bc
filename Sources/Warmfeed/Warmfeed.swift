// Warmfeed: the server, wired. Routes (`FeedRoutes`, `ThumbnailRoutes`,
// `AdminRoutes`), rendering (`PageRenderer` over `HTMLTemplates`, `PageService`
// with the page cache), and the long-lived services: `ThumbnailService` (runs
// the thumbnail cache's state machine over the disk tier, libcurl and
// libvips), `Prewarmer` (runs the pre-warm planner), `SourceRefresher`,
// `RowPreparation`, `PreviewKeeper`, `SharedTier`, `CacheObserver`,
// `DemoOrigin`, and the store's own (`StoreService`: PostgreSQL's listener
// moves the revision when another node writes). `WarmfeedApp` assembles
// them and hands `services` to one ServiceGroup, so SIGTERM reaches each.
