import WarmfeedCore

/// Pages for pre-warm read and rendered the way the feed's routes render a
/// fragment, through a function given by whoever assembles the app. A stopgap
/// until one page service owns reading and rendering pages for both.
struct FragmentPages: PrewarmPages {
    /// Reads and renders the page a query names.
    let fragment: @Sendable (PageQuery) -> (page: Page, number: Int)?

    func pageForWarming(_ query: PageQuery) async -> (page: Page, number: Int)? {
        fragment(query)
    }
}
