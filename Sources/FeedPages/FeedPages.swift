// FeedPages: the feed's pages, read from the store and rendered.
//
// `PageQuery` parses what a reader asks for; `PageService` reads the page
// (rows rendered ahead by `RowPreparation` when the templates allow),
// `PageRenderer` writes it through the compiled templates, and `PageCache`
// keeps renderings, plain and gzipped; `FeedRoutes` answers `/` and
// `/fragment`. It tells pre-warm where readers are through `ReaderTracking`
// and gives pre-warm pages through `PrewarmPages`, both protocols it owns:
// it imports no sibling feature.
