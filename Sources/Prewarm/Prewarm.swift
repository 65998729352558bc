// Prewarm: the pages a reader is about to reach, rendered, with their
// thumbnails made, before the reader arrives.
//
// `PrewarmPlanner` decides which pages to warm ahead of which reader (a pure
// state machine); `Prewarmer` holds it behind one lock, hears of readers from
// the feed's routes (`ReaderTracking`, which pages own), gets pages through
// `PrewarmPages` and makes thumbnails through `ThumbnailWarming` (both
// protocols the lower feature owns: it holds no concrete type of either), and
// in a cluster claims each page (`PageWarmingClaims`) so one node warms it. It publishes its numbers,
// counted once by its planner, through the stats seam, where `/metrics` reads them too.
